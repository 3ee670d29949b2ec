/**
 * A window relative to when the question is asked ("a couple of days ago") is used loosely, so
 * its temporal score goes on falling past its edges; a calendar date or a client's window stays
 * strict.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { temporalScore } from '../../src/core/recall/rerank.js';
import type { Memory } from '../../src/core/types.js';

const said = (iso: string) =>
  ({ occurred_start: null, occurred_end: null, mentioned_at: new Date(iso) }) as unknown as Memory;
const told = (start: string, end: string) =>
  ({ occurred_start: new Date(start), occurred_end: new Date(end), mentioned_at: null }) as unknown as Memory;

// Two days: 18 and 19 March; half its width is one day.
const window = { start: new Date('2023-03-18T00:00:00Z'), end: new Date('2023-03-20T00:00:00Z') };

test('inside the window, loose or strict: 1 at the middle, 0.5 at the edges', () => {
  for (const loose of [false, true]) {
    assert.equal(temporalScore(said('2023-03-19T00:00:00Z'), window, loose), 1);
    assert.equal(temporalScore(said('2023-03-18T00:00:00Z'), window, loose), 0.5);
  }
});

test('past the edge a loose window goes on falling, to 0 at half its width', () => {
  const evening = said('2023-03-17T12:00:00Z');
  assert.equal(temporalScore(evening, window, false), 0);
  assert.equal(temporalScore(evening, window, true), 0.25);
  assert.equal(temporalScore(said('2023-03-16T00:00:00Z'), window, true), 0);
  assert.equal(temporalScore(said('2023-03-10T00:00:00Z'), window, true), 0);
  // What a memory tells of counts the same way: a span ending half a day before the window.
  assert.equal(temporalScore(told('2023-03-16T00:00:00Z', '2023-03-17T12:00:00Z'), window, true), 0.25);
});
