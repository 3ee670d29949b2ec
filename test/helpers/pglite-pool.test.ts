/**
 * The fast tier's reuse of embedded test databases (pglite-pool.ts): a database handed out again
 * is the template's, whatever the previous test did to its rows, sequences and session; one
 * whose schema changed is not handed out again; a closed handle refuses every call.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Db } from '../../src/store/db.js';
import { LATEST_VERSION } from '../../src/store/migrations/index.js';
import { openTestDb } from './engines.js';
import { schemaChanges } from './pglite-pool.js';

/** The instance behind a handle: each PGlite started at its own moment. */
const started = async (db: Db) =>
  String((await db.query<{ t: Date }>('SELECT pg_postmaster_start_time() AS t'))[0]!.t.getTime());

describe('reused embedded test databases', () => {
  const saved = process.env.MNEMO_TEST_PGLITE_REUSE;
  before(() => {
    process.env.MNEMO_TEST_PGLITE_REUSE = '1';
  });
  after(() => {
    if (saved === undefined) delete process.env.MNEMO_TEST_PGLITE_REUSE;
    else process.env.MNEMO_TEST_PGLITE_REUSE = saved;
  });

  test('a database given back is handed out again as the template left it', async () => {
    const first = await openTestDb('pglite');
    const instance = await started(first.db);
    await first.db.exec(`
      INSERT INTO projects (id, name) VALUES ('other', 'Other');
      UPDATE projects SET name = 'Renamed' WHERE id = 'default';
      INSERT INTO schema_migrations (version, name) VALUES (${LATEST_VERSION + 1}, 'from the future');
      SELECT nextval('memories_seq_seq'), nextval('memories_seq_seq');
      SET application_name = 'left behind';
      CREATE TEMP TABLE scratch (n int);`);
    await first.dispose();
    await assert.rejects(first.db.query('SELECT 1'), /closed/, 'the old handle refuses calls');

    const second = await openTestDb('pglite');
    try {
      assert.equal(await started(second.db), instance, 'the same database, reused');
      assert.deepEqual(
        (await second.db.query<{ id: string; name: string }>('SELECT id, name FROM projects')).map((p) => [
          p.id,
          p.name,
        ]),
        [['default', 'Default project']],
      );
      const [m] = await second.db.query<{ n: number; v: number }>(
        'SELECT count(*)::int AS n, max(version)::int AS v FROM schema_migrations',
      );
      assert.equal(m!.v, LATEST_VERSION);
      const [seq] = await second.db.query<{ n: string }>(`SELECT nextval('memories_seq_seq')::text AS n`);
      assert.equal(seq!.n, '1', 'sequences start again');
      const [app] = await second.db.query<{ application_name: string }>('SHOW application_name');
      assert.notEqual(app!.application_name, 'left behind');
      const [tmp] = await second.db.query<{ t: string | null }>(`SELECT to_regclass('scratch')::text AS t`);
      assert.equal(tmp!.t, null, 'temporary tables are gone');
    } finally {
      await second.dispose();
    }
  });

  test('a database whose schema a test changed is closed, not handed out again', async () => {
    const first = await openTestDb('pglite');
    const instance = await started(first.db);
    await first.db.exec('ALTER TABLE banks ADD COLUMN extra text');
    await first.dispose();
    const second = await openTestDb('pglite');
    try {
      assert.notEqual(await started(second.db), instance);
      const [col] = await second.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = 'banks' AND column_name = 'extra'`,
      );
      assert.equal(col!.n, 0);
    } finally {
      await second.dispose();
    }
  });

  test('every kind of schema change is counted, however it was made; temporary objects are not', async () => {
    const { db, dispose } = await openTestDb('pglite');
    const instance = await started(db);
    /** Whether `sql` counts as a schema change; rolled back, so each starts from the template's schema. */
    const counted = async (sql: string) => {
      const before = await schemaChanges(db);
      await db.exec(`BEGIN; ${sql}; ROLLBACK`);
      return (await schemaChanges(db)) > before;
    };
    const changes = {
      // Same name, same columns: only its definition tells.
      'an index redefined under its name': `DROP INDEX banks_space;
         CREATE UNIQUE INDEX banks_space ON banks (project_id, space_id)`,
      'a function added': 'CREATE FUNCTION left_behind() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$',
      'a table dropped': 'DROP TABLE audit_refusals',
      'a trigger disabled': 'ALTER TABLE memories DISABLE TRIGGER ALL',
      'a schema with a table': 'CREATE SCHEMA other; CREATE TABLE other.t (n int)',
      'a change with triggers off for replication': `SET LOCAL session_replication_role = replica;
         ALTER TABLE banks ADD COLUMN extra text`,
      'a change made in a function': `DO $$ BEGIN EXECUTE 'CREATE TABLE made_in_a_function (n int)'; END $$`,
    };
    for (const [what, sql] of Object.entries(changes)) assert.ok(await counted(sql), what);
    assert.equal(
      await counted(`CREATE TEMP TABLE scratch (n int); CREATE INDEX ON scratch (n);
         ALTER TABLE scratch ADD COLUMN m int; DROP TABLE scratch; CREATE TEMP TABLE kept (n int)`),
      false,
      'temporary objects',
    );
    // Counted even though each was rolled back: the database is not handed out again.
    await dispose();
    const second = await openTestDb('pglite');
    try {
      assert.notEqual(await started(second.db), instance);
    } finally {
      await second.dispose();
    }
  });

  test('a database where a test made and dropped temporary objects is handed out again', async () => {
    const first = await openTestDb('pglite');
    const instance = await started(first.db);
    await first.db.exec(`CREATE TEMP TABLE scratch (n int); CREATE INDEX ON scratch (n);
      ALTER TABLE scratch ADD COLUMN m int; DROP TABLE scratch; CREATE TEMP TABLE kept (n int)`);
    await first.dispose();
    const second = await openTestDb('pglite');
    try {
      assert.equal(await started(second.db), instance);
    } finally {
      await second.dispose();
    }
  });
});
