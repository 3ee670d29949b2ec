/**
 * The waits a model or embedding client asks for between attempts (its `@internal` `sleep`
 * option), recorded instead of spent: tests check what Retry-After and the backoff come to as
 * numbers, and take no seconds of sleeping.
 */
import assert from 'node:assert/strict';
import type { Sleep } from '../../src/net/retry.js';

/** A `sleep` that records each wait and returns at once; an aborted signal still rejects. */
export function recordedWaits(): { waits: number[]; sleep: Sleep } {
  const waits: number[] = [];
  const sleep: Sleep = async (ms, signal) => {
    signal?.throwIfAborted();
    waits.push(ms);
  };
  return { waits, sleep };
}

/** Each wait is the backoff of its retry (src/net/retry.ts): 0.5 s, 1 s, 2 s ..., each at most half short. */
export function assertBackoffs(waits: number[], retries: number[]): void {
  assert.equal(waits.length, retries.length, `waits ${JSON.stringify(waits)}`);
  waits.forEach((ms, i) => {
    const base = 500 * 2 ** retries[i]!;
    assert.ok(ms <= base && ms >= base / 2, `wait ${i}: ${ms} ms, not the backoff of ${base} ms`);
  });
}
