import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Memory } from '../types.js';
import type { AnalyzedQuery } from './query.js';
import { type Candidate, rerank } from './rerank.js';

const AT = new Date('2024-03-01T00:00:00Z');

function candidate(id: string, text: string, keyword: number, sides: number[]): Candidate {
  const memory: Memory = {
    id,
    bank_id: 'b',
    type: 'experience',
    text,
    context: null,
    occurred_start: null,
    occurred_end: null,
    mentioned_at: AT,
    tags: [],
    metadata: {},
    document_id: null,
    chunk_id: null,
    entities: [],
    created_at: AT,
    state: 'valid',
    invalidation_reason: null,
    edited_at: null,
  };
  return { memory, semantic: 0.3, keyword, sides, graph: 0, temporal: 0 };
}

function query(eventSides: string[][] | null): AnalyzedQuery {
  return {
    text: 'Which project did I start first, the Ferrari model or the Zero model?',
    terms: ['project', 'start', 'first', 'ferrari', 'model', 'zero'],
    entityProbes: [],
    window: null,
    windowAbsolute: false,
    anchor: null,
    eventSides,
    asksWhen: true,
    asksQuantity: null,
    reference: AT,
    vector: new Float32Array(4),
  };
}

test("a two-event query judges each event's turn on that event's words", () => {
  // The Ferrari turns hold most of the query's words; the Zero turn fewer; a turn on another
  // project holds the shared frame ("project", "start", "first") and beats it as one query.
  const candidates = [
    candidate('ferrari', 'I started the Ferrari model project.', 1, [1, 0]),
    candidate('other', 'I started a project at work first.', 0.6, [0, 0]),
    candidate('zero', 'Got the Zero kit out of the box.', 0.4, [0, 0.9]),
  ];
  const order = (scores: number[]) =>
    candidates
      .map((c, i) => ({ id: c.memory.id, s: scores[i]! }))
      .sort((a, b) => b.s - a.s)
      .map((x) => x.id);
  const off = { graph: false, temporal: false };
  assert.deepEqual(order(rerank(query(null), candidates, off)), ['ferrari', 'other', 'zero']);
  const paired = rerank(query([['ferrari'], ['zero']]), candidates, off);
  assert.deepEqual(order(paired), ['ferrari', 'zero', 'other']);
});
