/**
 * The first search of an encrypted bank reads and decrypts all its vectors; other requests
 * must not wait for the whole of it (issue 18). That load was one statement and one loop of
 * decryptions: at 100,000 memories the embedded engine's server held its event loop for 8–12 s.
 * It now reads a page of vectors a statement and lets the loop turn while decrypting, so the
 * longest stretch without a turn is a small part of the load.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { NewMemory } from '../../src/core/types.js';
import { storeOver } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import { newMemory } from '../helpers/memory.js';
import { type EncryptedApp, encryptedApp, newMasterKey } from './encryption-helpers.js';

const MEMORIES = 6000;
const DIMS = 100;
/** The longest stretch without a turn of the event loop, as a part of the whole cold search. */
const MAX_PART = 0.4;

function memory(i: number): NewMemory {
  const embedding = new Float32Array(DIMS);
  for (let k = 0; k < DIMS; k++) embedding[k] = Math.sin(i * 12.9898 + k * 78.233);
  return newMemory({
    text: `synthetic memory number ${i}`,
    content_hash: `h${i}`,
    embedding,
    terms: new Map([[`w${i % 100}`, 1]]),
  });
}

/** Runs `fn` while a chain of setImmediate callbacks records the longest gap between two turns. */
async function longestStall<T>(
  fn: () => Promise<T>,
): Promise<{ result: T; stallMs: number; totalMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  let running = true;
  const tick = () => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const started = performance.now();
  try {
    const result = await fn();
    return {
      result,
      stallMs: Math.max(stallMs, performance.now() - last),
      totalMs: performance.now() - started,
    };
  } finally {
    running = false;
  }
}

for (const engine of ENGINES) {
  describe(`cold load of an encrypted bank's vectors (${engine})`, () => {
    let dispose: () => Promise<void>;
    let store: Store;
    const key = newMasterKey();
    let writer: EncryptedApp;

    before(async () => {
      const opened = await openTestDb(engine);
      dispose = opened.dispose;
      store = storeOver(opened.db);
      writer = await encryptedApp(store, key, { worker: false });
      const s = writer.services.store;
      await s.ensureBank('default', 'sealed', {});
      await s.updateBankConfig('default', 'sealed', { encryption: 'managed' });
      for (let i = 0; i < MEMORIES; i += 500)
        await s.insertMemories(
          'default',
          'sealed',
          Array.from({ length: 500 }, (_, k) => memory(i + k)),
        );
    });
    after(async () => {
      await writer.close();
      await dispose();
    });

    test('the event loop takes turns while the vectors are read and decrypted', async () => {
      // A second process: its own, empty vector cache.
      const reader = await encryptedApp(store, key, { worker: false });
      try {
        const { result, stallMs, totalMs } = await longestStall(() =>
          reader.services.store.semanticSearch('default', 'sealed', memory(7).embedding, {}, 10),
        );
        assert.equal(result.length, 10);
        assert.ok(result[0]!.score > 0.999, 'the memory searched with its own vector comes first');
        assert.ok(
          stallMs < MAX_PART * totalMs,
          `the cold search of ${MEMORIES} sealed vectors took ${totalMs.toFixed(0)} ms, ` +
            `${stallMs.toFixed(0)} ms of it without a turn of the event loop`,
        );
      } finally {
        await reader.close();
      }
    });
  });
}
