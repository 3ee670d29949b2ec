/**
 * Evaluation runs in the store: kept per bank, listed newest first page by page, the oldest
 * dropped beyond the number kept, and gone with their bank.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { NewEvaluation, Store } from '../../src/store/store.js';
import { ENGINES, openTestStore } from '../helpers/engines.js';

const run = (recall: number): NewEvaluation => ({
  id: randomUUID(),
  k: 10,
  options: { max_tokens: 4000 },
  case_count: 2,
  recall_at_k: recall,
  mrr: recall / 2,
  channels: { keyword: { recall_at_k: recall, mrr: 0.25 } },
  cases: JSON.stringify([{ query: `q ${recall}` }]),
});

for (const engine of ENGINES) {
  describe(`evaluation runs in the store (${engine})`, () => {
    let store: Store & { dispose(): Promise<void> };
    before(async () => {
      store = await openTestStore(engine);
    });
    after(() => store.dispose());

    test('insert, get, list newest first by pages, delete', async () => {
      await store.ensureBank('default', 'paged', {});
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const e = run(i / 10);
        const written = await store.insertEvaluation('default', 'paged', e, 100);
        assert.equal(written?.id, e.id);
        assert.equal(written?.bank_id, 'paged');
        assert.ok(written?.created_at instanceof Date);
        ids.push(e.id);
      }
      const got = await store.getEvaluation('default', 'paged', ids[2]!);
      assert.equal(got?.recall_at_k, 0.2);
      assert.equal(got?.mrr, 0.1);
      assert.deepEqual(got?.channels, { keyword: { recall_at_k: 0.2, mrr: 0.25 } });
      assert.deepEqual(got?.options, { max_tokens: 4000 });
      assert.equal(got?.cases, JSON.stringify([{ query: 'q 0.2' }]));

      const listed: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await store.listEvaluations('default', 'paged', { limit: 2, cursor });
        for (const item of page.items) assert.ok(!('cases' in item), 'a listing leaves the cases out');
        listed.push(...page.items.map((e) => e.id));
        cursor = page.next_cursor ?? undefined;
        pages++;
      } while (cursor);
      assert.deepEqual(listed, [...ids].reverse());
      assert.equal(pages, 3);

      assert.equal(await store.deleteEvaluation('default', 'paged', ids[0]!), true);
      assert.equal(await store.deleteEvaluation('default', 'paged', ids[0]!), false);
      assert.equal(await store.getEvaluation('default', 'paged', ids[0]!), null);
      // Another bank's id is not found through this one.
      await store.ensureBank('default', 'other', {});
      assert.equal(await store.getEvaluation('default', 'other', ids[1]!), null);
      assert.equal(await store.deleteEvaluation('default', 'other', ids[1]!), false);
    });

    test('beyond the number kept, the oldest runs go', async () => {
      await store.ensureBank('default', 'kept', {});
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const e = run(i / 10);
        await store.insertEvaluation('default', 'kept', e, 3);
        ids.push(e.id);
      }
      const page = await store.listEvaluations('default', 'kept', { limit: 10 });
      assert.deepEqual(
        page.items.map((e) => e.id),
        ids.slice(2).reverse(),
      );
    });

    test('runs go with their bank', async () => {
      await store.ensureBank('default', 'gone', {});
      const e = run(0.5);
      await store.insertEvaluation('default', 'gone', e, 10);
      assert.notEqual(await store.deleteBank('default', 'gone'), null);
      await store.ensureBank('default', 'gone', {});
      assert.equal(await store.getEvaluation('default', 'gone', e.id), null);
      assert.deepEqual((await store.listEvaluations('default', 'gone', { limit: 10 })).items, []);
      assert.equal(await store.insertEvaluation('default', 'never-made', run(0.1), 10), null);
    });
  });
}
