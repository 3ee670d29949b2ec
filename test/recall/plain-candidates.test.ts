/**
 * A Recall's candidates in a plain bank (nothing sealed) pass the encryption layer without a
 * promise each: it opened every candidate in an async function of its own (three promises per
 * candidate, a Recall reads a hundred, each one through the promise hooks the server's
 * AsyncLocalStorage keeps live). They come out as the store read them, with their similarity.
 */
import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import { after, before, describe, test } from 'node:test';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import type { Store } from '../../src/store/store.js';
import { ENGINES, openTestStore } from '../helpers/engines.js';

const N = 60;

for (const engine of ENGINES) {
  describe(`plain candidates (${engine})`, () => {
    let t: TestApp;
    /** The store under the encryption layer. */
    let raw: Store;
    let ids: string[];
    before(async () => {
      raw = await openTestStore(engine);
      t = await testApp(engine, { store: raw });
      const items = Array.from({ length: N }, (_, i) => ({
        content: `Grace planted lemon tree number ${i}.`,
      }));
      const r = await t.call('POST', bankPath('plain', '/memories'), { body: { items } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const listed = await t.call('GET', bankPath('plain', '/memories?limit=100'));
      ids = (listed.body.items as { id: string }[]).map((m) => m.id);
      assert.equal(ids.length, N);
    });
    after(() => t.close());

    test('are opened without a promise per candidate, as read', async () => {
      const [vector] = await t.services.embedder.embed(['lemon tree']);
      const read = (store: Store, count: () => void) =>
        store.readSnapshot(async (s) => {
          const hook = createHook({ init: (_id, type) => type === 'PROMISE' && count() });
          hook.enable();
          try {
            return await s.getCandidates('default', 'plain', ids, vector!);
          } finally {
            hook.disable();
          }
        });
      let own = 0;
      await read(raw, () => own++);
      let promises = 0;
      const got = await read(t.services.store, () => promises++);
      assert.equal(got.length, N);
      // The engine's own promises (PGlite reads 20 candidates per statement) are not the layer's.
      assert.ok(
        promises - own < N / 2,
        `${promises} promises for ${N} candidates, ${own} of them the store's`,
      );
      for (const m of got) {
        assert.match(m.text, /^Grace planted lemon tree number \d+\.$/);
        assert.equal(typeof m.similarity, 'number');
        assert.deepEqual(m.entities, []);
      }
    });
  });
}
