/**
 * A request for advice ("can you recommend…") is answered to suit the user's taste, which they
 * state in their own words: the reranker's `taste` signal favours a memory that states one (fact
 * type `preference`) for such a query, and no other query. Through Recall on both engines:
 * test/recall/query-intent.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeQuery } from '../../src/core/recall/query.js';
import { type Candidate, rerank } from '../../src/core/recall/rerank.js';
import type { FactType, Memory } from '../../src/core/types.js';
import { testApp } from '../helpers/app.js';

const AT = new Date('2023-03-20T12:00:00Z');
const candidate = (type: FactType): Candidate => ({
  memory: {
    id: type,
    text: 'A movie marathon.',
    type,
    entities: [],
    metadata: {},
    occurred_start: null,
    occurred_end: null,
    mentioned_at: AT,
    created_at: AT,
  } as unknown as Memory,
  semantic: 0.5,
  keyword: 1,
  graph: 0,
  temporal: 0,
});

test('the taste signal counts for a request for advice only', async () => {
  const t = await testApp('pglite');
  try {
    const scores = async (query: string) => {
      const q = await analyzeQuery(t.services, query, AT, undefined);
      return {
        advice: q.asksAdvice,
        scores: rerank(q, [candidate('preference'), candidate('world')], { graph: false, temporal: false }),
      };
    };
    const asked = await scores('Can you recommend a movie marathon for tonight?');
    assert.equal(asked.advice, true);
    assert.ok(asked.scores[0]! > asked.scores[1]!, String(asked.scores));
    const plain = await scores('Which movie marathon was on?');
    assert.equal(plain.advice, false);
    // The prior by fact type still tells them apart, by as much as before.
    assert.ok(plain.scores[0]! - plain.scores[1]! < asked.scores[0]! - asked.scores[1]!);
  } finally {
    await t.close();
  }
});
