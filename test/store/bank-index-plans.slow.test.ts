/**
 * A statement both engines prepare once may run with a generic plan; the plan chosen for the
 * banks sharing the common vector index must not cost a bank its own (partial) index
 * (src/core/recall/bank-index.ts). Slow tier: each engine fills banks of thousands of memories
 * and builds an HNSW index. test/store/prepared-statements.test.ts holds the rest of what
 * prepared statements must do.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type pg from 'pg';
import { EXACT_SEARCH_LIMIT } from '../../src/core/recall/bank-index.js';
import type { Db } from '../../src/store/db.js';
import { storeOver } from '../../src/store/open.js';
import { bankIndexName } from '../../src/store/sql/bank-index.js';
import type { Store } from '../../src/store/store.js';
import { withVectorIndexesBuiltAfter } from '../helpers/bulk.js';
import { oneConnectionPostgres, openTestDb } from '../helpers/engines.js';
import { newMemory, seededVector } from '../helpers/memory.js';
import { until } from '../helpers/until.js';

const vector = seededVector;

async function fill(store: Store, bank: string, from: number, n: number) {
  await store.ensureBank('default', bank, {});
  for (let i = 0; i < n; i += 500) {
    const seeds = Array.from({ length: Math.min(500, n - i) }, (_, k) => from + i + k);
    await store.insertMemories(
      'default',
      bank,
      seeds.map((s) => newMemory({ text: `m${s}`, embedding: vector(s), terms: new Map([[`t${s}`, 1]]) })),
      {},
    );
  }
}

describe('generic plans keep bank indexes (postgres)', {
  skip: process.env.MNEMO_TEST_DATABASE_URL ? false : 'needs MNEMO_TEST_DATABASE_URL',
}, () => {
  // One connection: every statement below runs on the same prepared statements.
  let pgdb: Awaited<ReturnType<typeof oneConnectionPostgres>> | undefined;
  let store: Store;
  let admin: pg.Client;
  before(async () => {
    pgdb = await oneConnectionPostgres();
    ({ store, admin } = pgdb);
  });
  after(() => pgdb?.close());

  test("a bank's own vector index serves it after the statement ran for other banks", async () => {
    await withVectorIndexesBuiltAfter(admin, async () => {
      await fill(store, 'minor', 0, EXACT_SEARCH_LIMIT + 100);
      await fill(store, 'major', 100_000, EXACT_SEARCH_LIMIT + 100);
    });
    await store.buildBankIndex('default', 'minor', 100);
    await admin.query('ANALYZE memories');
    // Enough runs on the shared index for PostgreSQL to consider a generic plan, which could not
    // use the minority bank's partial index.
    for (let i = 0; i < 8; i++)
      assert.equal((await store.semanticSearch('default', 'major', vector(i), {}, 10)).length, 10);
    for (const seed of [7, 1234, 3999]) {
      const hits = await store.semanticSearch('default', 'minor', vector(seed), {}, 10);
      const [first] = await store.getMemories('default', 'minor', [hits[0]!.id]);
      assert.equal(first?.text, `m${seed}`);
    }
    // The store's backend sends its statistics when next idle, unforced up to 10 s later.
    await pgdb!.db.exec('SELECT pg_stat_force_next_flush()');
    await pgdb!.db.exec('SELECT 1');
    await until(
      async () =>
        (
          await admin.query<{ n: string }>(
            'SELECT idx_scan AS n FROM pg_stat_user_indexes WHERE indexrelname = $1',
            [bankIndexName('default', 'minor', 100)],
          )
        ).rows[0]?.n,
      (n) => Number(n) >= 3,
      30_000,
    );
  });
});

describe('generic plans keep bank indexes (pglite)', () => {
  let db: Db;
  let store: Store;
  before(async () => {
    ({ db } = await openTestDb('pglite'));
    store = storeOver(db);
  });
  after(() => db?.close());

  // Statistics of this backend are flushed at most once a second unless forced.
  const scans = async (index: string) => {
    await db.exec('SELECT pg_stat_force_next_flush()');
    await db.exec('SELECT 1');
    const rows = await db.query<{ n: number }>(
      'SELECT idx_scan::int AS n FROM pg_stat_user_indexes WHERE indexrelname = $1',
      [index],
    );
    return rows[0]?.n ?? 0;
  };

  test("a bank's own vector index serves it after the statement ran for other banks", async () => {
    await withVectorIndexesBuiltAfter(db, async () => {
      await fill(store, 'minor', 0, EXACT_SEARCH_LIMIT + 100);
      await fill(store, 'major', 100_000, EXACT_SEARCH_LIMIT + 100);
    });
    await store.buildBankIndex('default', 'minor', 100);
    await db.exec('ANALYZE memories');
    for (let i = 0; i < 8; i++)
      assert.equal((await store.semanticSearch('default', 'major', vector(i), {}, 10)).length, 10);
    const own = bankIndexName('default', 'minor', 100);
    const before = await scans(own);
    for (const seed of [7, 1234, 3999]) {
      const hits = await store.semanticSearch('default', 'minor', vector(seed), {}, 10);
      const [first] = await store.getMemories('default', 'minor', [hits[0]!.id]);
      assert.equal(first?.text, `m${seed}`);
    }
    assert.equal((await scans(own)) - before, 3);
  });
});
