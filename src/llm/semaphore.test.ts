import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Semaphore } from './semaphore.js';

describe('Semaphore', () => {
  test('runs at most `limit` tasks at once, in arrival order', async () => {
    const semaphore = new Semaphore(2);
    let running = 0;
    let peak = 0;
    const started: number[] = [];
    const task = (i: number) => async () => {
      started.push(i);
      peak = Math.max(peak, ++running);
      await new Promise((resolve) => setTimeout(resolve, 10));
      running--;
      return i;
    };
    const results = await Promise.all([0, 1, 2, 3, 4].map((i) => semaphore.run(task(i))));
    assert.deepEqual(results, [0, 1, 2, 3, 4]);
    assert.deepEqual(started, [0, 1, 2, 3, 4]);
    assert.equal(peak, 2);
  });

  test('an aborted waiter leaves the line and frees nothing it never held', async () => {
    const semaphore = new Semaphore(1);
    let release = () => {};
    const holder = semaphore.run(() => new Promise<void>((resolve) => (release = resolve)));
    const controller = new AbortController();
    const waiter = semaphore.run(async () => 'never', controller.signal);
    controller.abort();
    await assert.rejects(waiter, { name: 'AbortError' });
    release();
    await holder;
    assert.equal(await semaphore.run(async () => 'next'), 'next');
  });

  test('a failing task releases its slot', async () => {
    const semaphore = new Semaphore(1);
    await assert.rejects(
      semaphore.run(() => Promise.reject(new Error('boom'))),
      /boom/,
    );
    assert.equal(await semaphore.run(async () => 'ok'), 'ok');
  });
});
