/**
 * The channels statement of a bank without a vector index of its own keeps a generic plan once
 * PostgreSQL finds it no dearer than the custom ones: planning it afresh on every Recall was ~27%
 * of a Recall's database CPU (docs/recall.md). A bank with its own index still gets custom plans
 * (test/store/bank-index-plans.slow.test.ts). Slow tier: it fills a bank past the exact-search size.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EXACT_SEARCH_LIMIT } from '../../src/core/recall/bank-index.js';
import type { Store } from '../../src/store/store.js';
import { withVectorIndexesBuiltAfter } from '../helpers/bulk.js';
import { oneConnectionPostgres } from '../helpers/engines.js';
import { newMemory, seededVector } from '../helpers/memory.js';

const vector = seededVector;

async function fill(store: Store, bank: string, n: number) {
  await store.ensureBank('default', bank, {});
  for (let i = 0; i < n; i += 500) {
    const seeds = Array.from({ length: Math.min(500, n - i) }, (_, k) => i + k);
    await store.insertMemories(
      'default',
      bank,
      seeds.map((s) =>
        newMemory({ text: `m${s}`, embedding: vector(s), terms: new Map([[`t${s % 50}`, 1]]) }),
      ),
      {},
    );
  }
}

// Plans are PostgreSQL's own to show (pg_prepared_statements); the embedded engine shares the SQL.
if (process.env.MNEMO_TEST_DATABASE_URL)
  describe('channels statement plans', () => {
    let pgdb: Awaited<ReturnType<typeof oneConnectionPostgres>> | undefined;
    before(async () => {
      pgdb = await oneConnectionPostgres();
    });
    after(() => pgdb?.close());

    test('a bank without its own vector index runs the channels statement on a generic plan', async () => {
      const { store, admin, db } = pgdb!;
      await withVectorIndexesBuiltAfter(admin, () => fill(store, 'solo', EXACT_SEARCH_LIMIT + 100));
      await admin.query('ANALYZE');
      const q = { terms: ['t1', 't2'], window: null, graph: null };
      for (let i = 0; i < 10; i++) {
        const hits = await store.searchChannels('default', 'solo', { ...q, vector: vector(i) }, {}, 10);
        assert.equal(hits.semantic.length, 10);
      }
      const rows = await db.query<{ generic: number }>(
        `SELECT generic_plans::int AS generic FROM pg_prepared_statements WHERE statement LIKE '%AS ch, id, score%'`,
      );
      assert.ok(rows.length > 0, 'the channels statement is prepared');
      assert.ok(
        rows.some((r) => r.generic > 0),
        `generic plans: ${rows.map((r) => r.generic).join(', ')}`,
      );
    });
  });
