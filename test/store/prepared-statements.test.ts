/**
 * Both engines prepare their statements with parameters once (PostgreSQL per connection, PGlite
 * per process). A table changed under a prepared statement (another process's migration, or an
 * upgrade in this one) must not break the next run. That a generic plan does not cost a bank its
 * own vector index is proved in bank-index-plans.slow.test.ts (it fills banks of thousands).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type pg from 'pg';
import type { Db } from '../../src/store/db.js';
import type { Store } from '../../src/store/store.js';
import { oneConnectionPostgres, openTestDb } from '../helpers/engines.js';

describe('prepared statements (postgres)', {
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
  before(async () => {
    ({ db } = await openTestDb('pglite'));
  });
  after(() => db?.close());

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
