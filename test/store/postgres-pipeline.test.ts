/**
 * PostgreSQL's transactions write what they issue together at once (`pipelined` in
 * src/store/postgres.ts): a snapshot's BEGIN with its first statement, its last statement with its
 * COMMIT (`queryLast`), statements issued in one turn without waiting for each other. On a pool of
 * one connection, so that whatever a transaction left behind on it (an open or aborted
 * transaction, an answer read by the wrong statement) would meet the next one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Db } from '../../src/store/db.js';
import { openPostgres } from '../../src/store/postgres.js';
import { createTestDatabase } from '../helpers/engines.js';

describe('statements sent together in a transaction (postgres)', {
  skip: process.env.MNEMO_TEST_DATABASE_URL ? false : 'needs MNEMO_TEST_DATABASE_URL',
}, () => {
  let db: Db;
  let drop: () => Promise<void>;
  let url: string;
  before(async () => {
    const made = await createTestDatabase('empty');
    drop = made.drop;
    url = made.url!;
    db = await openPostgres(url, { poolSize: 1 });
    await db.exec('CREATE TABLE t (id int PRIMARY KEY, v text)');
  });
  after(async () => {
    await db.close();
    await drop();
  });

  /**
   * The pool's connection answers (no aborted transaction left on it) outside a snapshot (read
   * committed, as outside any transaction or in a write's).
   */
  const clean = async () => {
    const [row] = await db.query<{ iso: string }>(
      "SELECT current_setting('transaction_isolation') AS iso FROM (SELECT $1::int) x",
      [1],
    );
    assert.deepEqual(row, { iso: 'read committed' });
  };
  /** Rows as another connection sees them: committed, and nothing else. */
  const committed = async (sql: string) => {
    const other = await openPostgres(url, { poolSize: 1 });
    try {
      return await other.query(sql);
    } finally {
      await other.close();
    }
  };

  test('a snapshot: statements issued together answer each its own, in one snapshot, begun and ended', async () => {
    await db.exec("INSERT INTO t VALUES (1, 'one'), (2, 'two')");
    const answers = await db.transaction(async (tx) => {
      const a = tx.query<{ v: string; iso: string; ro: string }>(
        `SELECT v, current_setting('transaction_isolation') AS iso, current_setting('transaction_read_only') AS ro
         FROM t WHERE id = $1`,
        [1],
      );
      const b = tx.query<{ v: string }>('SELECT v FROM t WHERE id = $1', [2]);
      const c = tx.query<{ n: number }>('SELECT count(*)::int AS n FROM t WHERE id > $1', [0]);
      const first = await Promise.all([a, b, c]);
      const last = await tx.queryLast!<{ x: number }>('SELECT $1::int AS x', [7]);
      return [...first, last];
    }, 'snapshot');
    assert.deepEqual(answers, [
      [{ v: 'one', iso: 'repeatable read', ro: 'on' }],
      [{ v: 'two' }],
      [{ n: 2 }],
      [{ x: 7 }],
    ]);
    await clean();
  });

  test('nothing goes into a snapshot after its last statement', async () => {
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.queryLast!('SELECT $1::int', [1]);
        await tx.query('SELECT $1::int', [2]);
      }, 'snapshot'),
      /ended with its last statement/,
    );
    await clean();
  });

  test('a failing statement, with others sent behind it, fails its snapshot and leaves the connection clean', async () => {
    await assert.rejects(
      db.transaction(async (tx) => {
        const bad = tx.query('SELECT 1 / $1::int', [0]);
        const behind = tx.query('SELECT $1::int', [1]);
        await Promise.all([bad, behind]);
      }, 'snapshot'),
      /division by zero/,
    );
    await clean();
    // The last statement failing: its COMMIT ends the aborted snapshot.
    await assert.rejects(
      db.transaction((tx) => tx.queryLast!('SELECT 1 / $1::int', [0]), 'snapshot'),
      /division by zero/,
    );
    await clean();
    assert.deepEqual(await db.query('SELECT v FROM t WHERE id = $1', [1]), [{ v: 'one' }]);
  });

  test('a write that fails half way commits nothing, statements sent together or not', async () => {
    await assert.rejects(
      db.transaction(async (tx) => {
        const a = tx.query('INSERT INTO t VALUES ($1, $2)', [3, 'three']);
        const b = tx.query('INSERT INTO t VALUES ($1, $2)', [1, 'again']); // duplicate key
        await Promise.all([a, b]);
      }),
    );
    await clean();
    assert.deepEqual(await committed('SELECT id FROM t ORDER BY id'), [{ id: 1 }, { id: 2 }]);
    // And one that succeeds commits all of it.
    await db.transaction(async (tx) => {
      await Promise.all([
        tx.query('INSERT INTO t VALUES ($1, $2)', [3, 'three']),
        tx.query('UPDATE t SET v = $2 WHERE id = $1', [1, 'uno']),
      ]);
    });
    await clean();
    assert.deepEqual(await committed('SELECT id, v FROM t ORDER BY id'), [
      { id: 1, v: 'uno' },
      { id: 2, v: 'two' },
      { id: 3, v: 'three' },
    ]);
  });
});
