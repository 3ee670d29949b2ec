/**
 * Both engines prepare their statements with parameters once (PostgreSQL per connection, PGlite
 * per process). A prepared statement may run with a generic plan, which must not cost a bank its
 * own vector index; and a table changed under a prepared statement (another process's migration,
 * or an upgrade in this one) must not break the next run.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { EXACT_SEARCH_LIMIT } from '../../src/core/recall/bank-index.js';
import type { Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { openStore, storeOver } from '../../src/store/open.js';
import { openPglite } from '../../src/store/pglite.js';
import { bankIndexName } from '../../src/store/sql/bank-index.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, type TestDatabase } from '../helpers/engines.js';
import { newMemory } from '../helpers/memory.js';
import { until } from '../helpers/until.js';

function vector(seed: number): Float32Array {
  const v = new Float32Array(100);
  for (let i = 0; i < v.length; i++) v[i] = Math.sin(seed * 12.9898 + i * 78.233);
  const norm = Math.hypot(...v);
  return v.map((a) => a / norm);
}

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

describe('prepared statements (postgres)', {
  skip: process.env.MNEMO_TEST_DATABASE_URL ? false : 'needs MNEMO_TEST_DATABASE_URL',
}, () => {
  let db: TestDatabase;
  let store: Store;
  let admin: pg.Client;
  before(async () => {
    db = await createTestDatabase();
    // One connection: every statement below runs on the same prepared statements.
    store = await openStore({ databaseUrl: db.url, poolSize: 1 });
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
  });
  after(async () => {
    await admin?.end();
    await store?.close();
    await db?.drop();
  });

  test("a bank's own vector index serves it after the statement ran for other banks", async () => {
    await fill(store, 'minor', 0, EXACT_SEARCH_LIMIT + 100);
    await fill(store, 'major', 100_000, 3 * EXACT_SEARCH_LIMIT);
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
    // Statistics reach other sessions within seconds of the searches.
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

  test('a column type changed under a prepared statement: the next run still answers', async () => {
    await store.ensureBank('default', 'named', {});
    await store.updateBank('default', 'named', { name: 'Named' });
    assert.equal((await store.getBank('default', 'named'))?.name, 'Named');
    await admin.query('ALTER TABLE banks ALTER COLUMN name TYPE varchar(500)');
    assert.equal((await store.getBank('default', 'named'))?.name, 'Named');
    assert.equal((await store.getBank('default', 'named'))?.name, 'Named', 'and again');
  });
});

describe('prepared statements (pglite)', () => {
  let db: Db;
  let store: Store;
  before(async () => {
    db = await openPglite();
    await migrate(db);
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
    await fill(store, 'minor', 0, EXACT_SEARCH_LIMIT + 100);
    await fill(store, 'major', 100_000, EXACT_SEARCH_LIMIT + 100);
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

  test('a table changed under a prepared statement: the next run answers with its new shape', async () => {
    await db.exec('CREATE TABLE shape (id int PRIMARY KEY, a text)');
    await db.query('INSERT INTO shape VALUES ($1, $2)', [1, 'x']);
    const read = () => db.query<Record<string, unknown>>('SELECT * FROM shape WHERE id = $1', [1]);
    assert.deepEqual(await read(), [{ id: 1, a: 'x' }]);
    await db.exec("ALTER TABLE shape ADD COLUMN b text NOT NULL DEFAULT 'y'");
    assert.deepEqual(await read(), [{ id: 1, a: 'x', b: 'y' }]);
    // In a transaction the failed run aborts it, so it is not retried there; the next one is fresh.
    await db.exec('ALTER TABLE shape ALTER COLUMN a TYPE varchar(9)');
    const inTx = await db
      .transaction((tx) => tx.query('SELECT * FROM shape WHERE id = $1', [1]))
      .then(
        (rows) => rows,
        (err: Error) => err.message,
      );
    assert.ok(
      Array.isArray(inTx) || /cached plan must not change result type/.test(inTx),
      `unexpected: ${String(inTx)}`,
    );
    assert.deepEqual(await read(), [{ id: 1, a: 'x', b: 'y' }]);
  });

  test('bad input through a prepared statement is a clear error, and the statement still works', async () => {
    await assert.rejects(db.query('SELECT $1::int AS n', ['not a number']), (err: Error) =>
      /invalid input syntax/.test(err.message),
    );
    assert.deepEqual(await db.query('SELECT $1::int AS n', [5]), [{ n: 5 }]);
  });

  test("a statement from outside waits for another caller's transaction: it never runs inside it", async () => {
    await db.exec('CREATE TABLE apart (id int PRIMARY KEY)');
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const rolledBack = db.transaction(async (tx) => {
      await tx.query('INSERT INTO apart VALUES ($1)', [1]);
      entered();
      await held;
      throw new Error('rolled back');
    });
    await inside;
    // Another request's read and write, while the transaction is open between two statements.
    const read = db.query<{ n: number }>('SELECT count(*)::int AS n FROM apart WHERE id > $1', [0]);
    const write = db.query('INSERT INTO apart VALUES ($1)', [2]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    await assert.rejects(rolledBack, /rolled back/);
    assert.deepEqual(await read, [{ n: 0 }], 'the read saw no uncommitted row');
    await write;
    assert.deepEqual(
      await db.query('SELECT id FROM apart ORDER BY id'),
      [{ id: 2 }],
      'the write survived the rollback',
    );
  });
});
