/**
 * The embedded engine's prepared statements read their answers from the protocol's bytes
 * (src/store/pglite-wire.ts) instead of PGlite's message objects: the rows must be those PGlite's
 * own `query` returns, value for value and type for type, and its errors the same errors.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import type { Db } from '../../src/store/db.js';
import { openTestDb } from '../helpers/engines.js';

describe('the embedded engine read from its bytes (pglite)', () => {
  let db: Db;
  // PGlite's own reader, over the same kind of engine, for comparison.
  let own: PGlite;
  before(async () => {
    ({ db } = await openTestDb('pglite'));
    own = await PGlite.create();
  });
  after(async () => {
    await db?.close();
    await own?.close();
  });

  // Every type a Recall reads, NULLs, text that is not ASCII, and a name given twice.
  const VALUES = `SELECT $1::text AS t, $2::int AS i, $3::bigint AS big, $4::float8 AS f, $5::bool AS b,
      $6::timestamptz AS ts, '{"a": [1, "é"]}'::jsonb AS j, ARRAY['x', NULL, 'y z', 'ç"''', 'a,b']::text[] AS arr,
      NULL::text AS nothing, ''::text AS empty, 'ünïcødé 🐘'::text AS uni, 1.5::numeric AS num,
      '{1,2}'::int[] AS ints, 7 AS dup, 8 AS dup, gen_random_uuid() IS NOT NULL AS u`;
  const PARAMS = ['tëxt', 42, '9007199254740993', 0.1, true, new Date('2026-11-27T12:34:56.789Z')];

  test('rows equal those of PGlite’s query, types included', async () => {
    const mine = await db.query<Record<string, unknown>>(VALUES, PARAMS);
    const theirs = (await own.query<Record<string, unknown>>(VALUES, PARAMS)).rows;
    assert.deepEqual(mine, theirs);
    assert.equal(Object.keys(mine[0]!).join(), Object.keys(theirs[0]!).join(), 'same columns, same order');
    assert.ok(mine[0]!.ts instanceof Date);
    // Run again: the statement is now prepared, its rows described once.
    assert.deepEqual(await db.query(VALUES, PARAMS), theirs);
  });

  test('an answer longer than one chunk of the engine’s output', async () => {
    const sql = 'SELECT g AS n, repeat(chr(233), $1::int) || g AS s FROM generate_series(1, $2::int) g';
    const mine = await db.query<{ n: number; s: string }>(sql, [300, 4000]);
    const theirs = (await own.query<{ n: number; s: string }>(sql, [300, 4000])).rows;
    assert.equal(mine.length, 4000);
    assert.deepEqual(mine, theirs);
  });

  test('no rows, and a write without rows', async () => {
    assert.deepEqual(await db.query('SELECT 1 AS one WHERE $1::int > 1', [0]), []);
    await db.exec('CREATE TABLE wire_w (id int PRIMARY KEY)');
    assert.deepEqual(await db.query('INSERT INTO wire_w VALUES ($1)', [1]), []);
    assert.deepEqual(await db.query('SELECT id FROM wire_w WHERE id = $1', [1]), [{ id: 1 }]);
  });

  test('a failed statement throws PGlite’s error, with its SQLSTATE, and the next one runs', async () => {
    const sql = 'SELECT x FROM wire_missing WHERE x = $1::int';
    const mine = await db.query(sql, [0]).then(
      () => null,
      (e: unknown) => e as Error & { code?: string },
    );
    const theirs = await own.query(sql, [0]).then(
      () => null,
      (e: unknown) => e as Error & { code?: string },
    );
    assert.ok(mine && theirs);
    assert.equal(mine.constructor, theirs.constructor);
    assert.equal(mine.code, '42P01');
    assert.equal(mine.message, theirs.message);
    assert.deepEqual(await db.query('SELECT 1 / $1::int AS x', [1]), [{ x: 1 }]);
    // A value the client sent that the engine refuses is a 400, as before (store/input-errors.ts).
    await assert.rejects(db.query('SELECT $1::int AS x', ['nope']), { code: 'validation_error' });
  });

  test('inside a transaction, rows and a failure that aborts it', async () => {
    const rows = await db.transaction(async (tx) => {
      await tx.query('INSERT INTO wire_w VALUES ($1)', [2]);
      return tx.query<{ id: number }>('SELECT id FROM wire_w WHERE id >= $1 ORDER BY id', [1]);
    });
    assert.deepEqual(rows, [{ id: 1 }, { id: 2 }]);
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.query('INSERT INTO wire_w VALUES ($1)', [3]);
        await tx.query('INSERT INTO wire_w VALUES ($1)', [3]);
      }),
      { code: '23505' },
    );
    assert.deepEqual(await db.query('SELECT count(*)::int AS n FROM wire_w WHERE id > $1', [0]), [{ n: 2 }]);
  });
});
