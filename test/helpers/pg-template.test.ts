/**
 * The run's migrated PostgreSQL template (pg-template.ts): a copy starts migrated; the template
 * is built once however many build it at once, is closed to connections, is built again when a
 * killed builder left it half-built, and is dropped with its run.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { migrate } from '../../src/store/migrate.js';
import { LATEST_VERSION, MIGRATIONS } from '../../src/store/migrations/index.js';
import { openPostgres } from '../../src/store/postgres.js';
import { createTestDatabase, ENGINES } from './engines.js';
import { buildTemplate, dropRunTemplates, templateName } from './pg-template.js';

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: process.env.MNEMO_TEST_DATABASE_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

const database = (name: string) =>
  admin(
    async (c) =>
      (
        await c.query<{ oid: number; datistemplate: boolean; datallowconn: boolean }>(
          'SELECT oid::int AS oid, datistemplate, datallowconn FROM pg_database WHERE datname = $1',
          [name],
        )
      ).rows[0],
  );

if (ENGINES.includes('postgres'))
  describe('the migrated PostgreSQL template', () => {
    // A run of this test's own, so that its templates are not the run's.
    const run = `t${randomBytes(3).toString('hex')}`;
    after(() => dropRunTemplates(run));

    test('a copy of it starts migrated', async () => {
      const copy = await createTestDatabase('migrated');
      const db = await openPostgres(copy.url!, { poolSize: 1 });
      try {
        const [{ v }] = (await db.query<{ v: number }>(
          'SELECT max(version)::int AS v FROM schema_migrations',
        )) as [{ v: number }];
        assert.equal(v, LATEST_VERSION);
        await migrate(db); // nothing left to apply
        assert.equal((await db.query('SELECT 1 FROM schema_migrations')).length, MIGRATIONS.length);
      } finally {
        await db.close();
        await copy.drop();
      }
    });

    test('builders at once build it once; it is closed to connections; the run drops it', async () => {
      const name = templateName(run);
      await Promise.all([buildTemplate(name), buildTemplate(name), buildTemplate(name)]);
      const built = await database(name);
      assert.ok(built);
      assert.equal(built.datistemplate, true);
      assert.equal(built.datallowconn, false);
      await buildTemplate(name);
      assert.equal((await database(name))?.oid, built.oid, 'built once, not again');
      const url = new URL(process.env.MNEMO_TEST_DATABASE_URL!);
      url.pathname = `/${name}`;
      await assert.rejects(admin(() => new pg.Client({ connectionString: url.toString() }).connect()));
      await dropRunTemplates(run);
      assert.equal(await database(name), undefined);
    });

    test('one left half-built (not marked a template) is built again', async () => {
      const name = templateName(run);
      await admin((c) => c.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`));
      const half = await database(name);
      await buildTemplate(name);
      const built = await database(name);
      assert.notEqual(built?.oid, half?.oid);
      assert.equal(built?.datistemplate, true);
    });
  });
