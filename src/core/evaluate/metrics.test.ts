import assert from 'node:assert/strict';
import { test } from 'node:test';
import { meanFigures, ranksWithin, scoreCase } from './metrics.js';

test('ranks count from 1 within the first k; beyond k or absent is null', () => {
  assert.deepEqual(ranksWithin(['a', 'b', 'c', 'd'], ['c', 'a', 'x', 'd'], 3), [3, 1, null, null]);
  assert.deepEqual(ranksWithin([], ['a'], 10), [null]);
});

test('a case with several expected memories: recall is the share found, MRR the first found', () => {
  const s = scoreCase([3, null, 2, null]);
  assert.deepEqual(s, { rank: 2, recall: 0.5, reciprocal: 0.5 });
  assert.deepEqual(scoreCase([null]), { rank: null, recall: 0, reciprocal: 0 });
});

test('a run averages its cases, each weighing the same', () => {
  const f = meanFigures([scoreCase([1]), scoreCase([null, 4]), scoreCase([null])]);
  assert.equal(f.recall_at_k, Math.round(((1 + 0.5 + 0) / 3) * 1e6) / 1e6);
  assert.equal(f.mrr, Math.round(((1 + 0.25 + 0) / 3) * 1e6) / 1e6);
  assert.deepEqual(meanFigures([]), { recall_at_k: 0, mrr: 0 });
});
