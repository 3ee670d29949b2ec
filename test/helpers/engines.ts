/**
 * Both storage engines for tests: PGlite in memory always, and PostgreSQL when
 * MNEMO_TEST_DATABASE_URL is set (CI sets it). Each PostgreSQL store gets a fresh database of
 * its own, dropped afterwards, so test files can run in parallel.
 *
 * Every PGlite store starts from one migrated template (see `migratedTemplate`) instead of an
 * empty database: creating a PGlite database (initdb) is most of the cost of opening one.
 * Migrating from nothing is proved by test/store/migrations.test.ts, which opens its own.
 * A closed PGlite test database is emptied back to the template's state and kept for the next
 * test of the process (test/helpers/pglite-pool.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import type { Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { storeOver } from '../../src/store/open.js';
import { lease } from './pglite-pool.js';
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

let template: Promise<Blob> | undefined;

/**
 * The embedded database as `openPglite` creates it, migrated: a data directory tarball that
 * each test's PGlite starts from (~0.7 s of CPU instead of ~2.5 s for initdb and migrations).
 * Made once per machine for each set of migrations and PGlite version, kept in the temporary
 * directory under a name hashing both, so a changed migration makes a new one; each process
 * reads it once.
 */
export function migratedTemplate(): Promise<Blob> {
  template ??= (async () => {
    const pgliteDir = dirname(dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')));
    const key = createHash('sha256')
      .update(readFileSync(join(pgliteDir, 'package.json')))
      .update(JSON.stringify(MIGRATIONS.map((m) => [m.version, m.name, m.sql])))
      .digest('hex')
      .slice(0, 16);
    const path = join(tmpdir(), `mnemo-test-pglite-${key}.tar`);
    try {
      return new Blob([await readFile(path)]);
    } catch {}
    const db = await openPglite(undefined);
    let tarball: Blob;
    try {
      await migrate(db);
      tarball = await db.dumpDataDir!();
    } finally {
      await db.close();
    }
    // Another test process may be writing the same template: each writes its own, then renames.
    const partial = `${path}.${process.pid}.partial`;
    await writeFile(partial, new Uint8Array(await tarball.arrayBuffer()));
    await rename(partial, path);
    return tarball;
  })();
  return template;
}

/**
 * A migrated in-memory PGlite: one this process closed before, emptied, or a new one started
 * from the template (migrating it checks it is current).
 */
function openTestPglite(): Promise<Db> {
  return lease(openFromTemplate);
}

async function openFromTemplate(): Promise<Db> {
  const db = await openPglite(undefined, { template: await migratedTemplate() });
  try {
    await migrate(db);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}

/** Opens a migrated store on the named engine; `close` also drops its database. */
export async function openTestStore(engine: EngineName): Promise<Store & { dispose(): Promise<void> }> {
  const { db, dispose } = await openTestDb(engine);
  return Object.assign(storeOver(db), { dispose });
}

/** A migrated database of the engine without a store over it, for tests that read stored rows. */
export async function openTestDb(engine: EngineName): Promise<{ db: Db; dispose(): Promise<void> }> {
  if (engine === 'pglite') {
    const db = await openTestPglite();
    return { db, dispose: () => db.close() };
  }
  const testDb = await createTestDatabase();
  const db = await openPostgres(testDb.url!, { poolSize: 4 });
  try {
    await migrate(db);
  } catch (err) {
    await db.close();
    await testDb.drop();
    throw err;
  }
  return {
    db,
    async dispose() {
      await db.close();
      await testDb.drop();
    },
  };
}
