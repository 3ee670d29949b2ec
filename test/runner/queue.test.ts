import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { costliestFirst, fillQueue, takeNext } from './queue.js';

test('the fast tier’s queue: costliest first, files never measured before them, ties in order', () => {
  assert.deepEqual(costliestFirst(['a', 'b', 'c', 'd', 'e'], { a: 100, b: 5000, d: 100, e: 300 }), [
    'c',
    'b',
    'e',
    'a',
    'd',
  ]);
});

test('each file of the queue is taken once, in order, then none', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-queue-'));
  try {
    const files = Array.from({ length: 12 }, (_, i) => `/tests/f${i}.test.ts`);
    fillQueue(dir, files);
    const taken: string[] = [];
    for (let f = takeNext(dir); f !== undefined; f = takeNext(dir)) taken.push(f);
    assert.deepEqual(taken, files);
    assert.equal(takeNext(dir), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
