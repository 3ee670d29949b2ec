import assert from 'node:assert/strict';
import { test } from 'node:test';
import { memoByText } from './memo.js';

test('memoByText computes each text once and returns the same result', () => {
  const calls: string[] = [];
  const len = memoByText((t) => {
    calls.push(t);
    return { n: t.length };
  });
  const first = len('hello');
  assert.equal(len('hello'), first);
  assert.deepEqual(first, { n: 5 });
  assert.deepEqual(calls, ['hello']);
});

test('memoByText keeps the texts used within its last half budget, and forgets the rest', () => {
  const calls: string[] = [];
  const up = memoByText((t) => {
    calls.push(t);
    return t.toUpperCase();
  }, 20);
  up('aaaa');
  up('bbbb');
  up('aaaa'); // a hit
  up('cccc'); // over 10 chars of texts: a new generation starts with it
  assert.deepEqual(calls, ['aaaa', 'bbbb', 'cccc']);
  assert.equal(up('aaaa'), 'AAAA'); // from the previous generation, kept again
  up('dddd');
  up('eeee'); // another new generation: 'bbbb' is gone
  assert.deepEqual(calls, ['aaaa', 'bbbb', 'cccc', 'dddd', 'eeee']);
  assert.equal(up('aaaa'), 'AAAA');
  assert.equal(up('bbbb'), 'BBBB');
  assert.deepEqual(calls, ['aaaa', 'bbbb', 'cccc', 'dddd', 'eeee', 'bbbb']);
  // A text longer than a generation is computed but not kept.
  up('x'.repeat(11));
  up('x'.repeat(11));
  assert.equal(calls.filter((c) => c.startsWith('x')).length, 2);
});
