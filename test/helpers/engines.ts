/**
 * Both storage engines for tests: PGlite in memory always, and PostgreSQL when
 * MNEMO_TEST_DATABASE_URL is set (CI sets it). Each PostgreSQL store gets a fresh database of
 * its own, dropped afterwards, so test files can run in parallel.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { openStore } from '../../src/store/open.js';
import { openPglite } from '../../src/store/pglite.js';
import { openPostgres } from '../../src/store/postgres.js';
import type { Store } from '../../src/store/store.js';

export type EngineName = 'pglite' | 'postgres';

export const ENGINES: EngineName[] = process.env.MNEMO_TEST_DATABASE_URL
  ? ['pglite', 'postgres']
  : ['pglite'];

export interface TestDatabase {
  url?: string;
  drop(): Promise<void>;
}

/** Creates an empty PostgreSQL database for one test file. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = process.env.MNEMO_TEST_DATABASE_URL;
  if (!admin) throw new Error('MNEMO_TEST_DATABASE_URL is not set');
  const name = `mnemo_t_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** Opens a migrated store on the named engine; `close` also drops its database. */
export async function openTestStore(engine: EngineName): Promise<Store & { dispose(): Promise<void> }> {
  if (engine === 'pglite') {
    const store = await openStore({});
    return Object.assign(store, { dispose: () => store.close() });
  }
  const db = await createTestDatabase();
  const store = await openStore({ databaseUrl: db.url, poolSize: 4 });
  return Object.assign(store, {
    async dispose() {
      await store.close();
      await db.drop();
    },
  });
}

/** A migrated database of the engine without a store over it, for tests that read stored rows. */
export async function openTestDb(engine: EngineName): Promise<{ db: Db; dispose(): Promise<void> }> {
  const testDb = engine === 'postgres' ? await createTestDatabase() : null;
  const db = testDb ? await openPostgres(testDb.url!, { poolSize: 4 }) : await openPglite(undefined);
  await migrate(db);
  return {
    db,
    async dispose() {
      await db.close();
      await testDb?.drop();
    },
  };
}
