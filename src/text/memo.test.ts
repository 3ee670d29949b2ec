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

test('memoByText forgets the least recently used texts beyond its character budget', () => {
  const calls: string[] = [];
  const up = memoByText((t) => {
    calls.push(t);
    return t.toUpperCase();
  }, 10);
  up('aaaa');
  up('bbbb');
  up('aaaa'); // now the most recent
  up('cccc'); // 12 chars: 'bbbb' goes
  assert.deepEqual(calls, ['aaaa', 'bbbb', 'cccc']);
  assert.equal(up('aaaa'), 'AAAA');
  assert.equal(up('bbbb'), 'BBBB');
  assert.deepEqual(calls, ['aaaa', 'bbbb', 'cccc', 'bbbb']);
  // A text longer than the whole budget is computed but not kept.
  up('x'.repeat(20));
  up('x'.repeat(20));
  assert.equal(calls.filter((c) => c.startsWith('x')).length, 2);
});
