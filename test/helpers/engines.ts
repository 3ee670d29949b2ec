/**
 * Both storage engines for tests: PGlite in memory always, and PostgreSQL when
 * MNEMO_TEST_DATABASE_URL is set (CI sets it). Each PostgreSQL store gets a fresh database of
 * its own, dropped afterwards, so test files can run in parallel: a copy of the run's migrated
 * template database (test/helpers/pg-template.ts).
 *
 * Every PGlite store starts from one migrated template (see `migratedTemplate`) instead of an
 * empty database: creating a PGlite database (initdb) is most of the cost of opening one.
 * Tests of migrating from nothing start from the empty template (`emptyTemplate`: initdb done,
 * nothing migrated), and tests of a data directory on disk seed it from either (`seedDataDir`).
 * A closed PGlite test database is emptied back to the template's state and kept for the next
 * test of the process (test/helpers/pglite-pool.ts).
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import pg from 'pg';
import type { Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { type StoreOptions, storeOver } from '../../src/store/open.js';
import { migratedPostgresTemplate } from './pg-template.js';
import { lease } from './pglite-pool.js';
import { TEST_CACHE_MB, TemplateTarball, type TemplateName, templateFile } from './pglite-templates.js';
import { openPglite } from '../../src/store/pglite.js';
import { openPgliteThread } from '../../src/store/pglite-thread.js';
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

/**
 * Creates a PostgreSQL database for one test file: `empty` (for tests of migrating, and of code
 * that migrates what it opens) or `migrated`, a copy of the run's migrated template
 * (test/helpers/pg-template.ts), which costs a file copy instead of every migration.
 */
export async function createTestDatabase(from: 'empty' | 'migrated' = 'empty'): Promise<TestDatabase> {
  const admin = process.env.MNEMO_TEST_DATABASE_URL;
  if (!admin) throw new Error('MNEMO_TEST_DATABASE_URL is not set');
  const template = from === 'migrated' ? await migratedPostgresTemplate() : undefined;
  const name = `mnemo_t_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(
      `CREATE DATABASE ${name}${template ? ` TEMPLATE ${pg.escapeIdentifier(template)}` : ''}`,
    );
  } finally {
    await client.end();
  }
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

const templates = new Map<TemplateName, Promise<Blob>>();

/**
 * A data directory tarball made once per machine (`templateFile`: in the temporary directory,
 * named by the PGlite version and the template's contents); each process reads it once.
 * `test/run.ts` builds them before it starts the test processes (`test/runner/caches.ts`), so
 * that these do not all build them at once on a fresh machine.
 */
function cachedTemplate(name: TemplateName, build: () => Promise<Blob>): Promise<Blob> {
  let made = templates.get(name);
  if (made) return made;
  made = (async () => {
    const path = templateFile(name);
    try {
      return new TemplateTarball(await readFile(path));
    } catch {}
    const tarball = new Uint8Array(await (await build()).arrayBuffer());
    // Another test process may be writing the same template: each writes its own, then renames.
    const partial = `${path}.${process.pid}.partial`;
    await writeFile(partial, tarball);
    await rename(partial, path);
    return new TemplateTarball(tarball);
  })();
  templates.set(name, made);
  return made;
}

/** `open()`'s database as a tarball, closed. */
async function dump(open: Promise<Db>, change: (db: Db) => Promise<unknown>): Promise<Blob> {
  const db = await open;
  try {
    await change(db);
    return await db.dumpDataDir!();
  } finally {
    await db.close();
  }
}

/**
 * The embedded database as `openPglite` creates it, before any migration: what a new data
 * directory holds once PGlite's initdb has run (~3 s of CPU, most of opening a new database),
 * for tests of migrating from nothing.
 */
export function emptyTemplate(): Promise<Blob> {
  return cachedTemplate('empty', () => dump(openPglite(undefined), async () => {}));
}

/**
 * The empty database migrated: the tarball each test's PGlite starts from (~0.7 s of CPU
 * instead of ~2.5 s for initdb and migrations).
 */
export function migratedTemplate(): Promise<Blob> {
  return cachedTemplate('migrated', async () =>
    dump(openPglite(undefined, { template: await emptyTemplate() }), migrate),
  );
}

/**
 * Creates the embedded data directory `dir` (as `openPglite(dir)` lays it out) from a template
 * instead of PGlite's initdb: `empty` before any migration, `migrated` up to date. For tests of
 * the CLI, the server or the files on disk; closed, so the code under test opens it.
 */
export async function seedDataDir(dir: string, template: 'empty' | 'migrated'): Promise<void> {
  const tarball = await (template === 'empty' ? emptyTemplate() : migratedTemplate());
  await (await openPglite(dir, { template: tarball, cacheMb: TEST_CACHE_MB })).close();
}

/**
 * A migrated in-memory PGlite: one this process closed before, emptied, or a new one started
 * from the template (migrating it checks it is current).
 */
function openTestPglite(): Promise<Db> {
  return lease(openFromTemplate);
}

async function openFromTemplate(): Promise<Db> {
  // MNEMO_TEST_PGLITE_THREAD=1: every test's engine on a thread of its own, as `mnemo serve` runs it
  // (test/store/pglite-thread.test.ts covers it in every run; this runs every suite through it).
  const open = process.env.MNEMO_TEST_PGLITE_THREAD === '1' ? openPgliteThread : openPglite;
  const db = await open(undefined, { template: await migratedTemplate(), cacheMb: TEST_CACHE_MB });
  try {
    await migrate(db);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}

/** Opens a migrated store on the named engine; `close` also drops its database. */
export async function openTestStore(
  engine: EngineName,
  opts: StoreOptions = {},
): Promise<Store & { dispose(): Promise<void> }> {
  const { db, dispose } = await openTestDb(engine);
  return Object.assign(storeOver(db, opts), { dispose });
}

/** A migrated database of the engine without a store over it, for tests that read stored rows. */
export async function openTestDb(engine: EngineName): Promise<{ db: Db; dispose(): Promise<void> }> {
  if (engine === 'pglite') {
    const db = await openTestPglite();
    return { db, dispose: () => db.close() };
  }
  return openTestPostgres(4);
}

/**
 * A migrated PostgreSQL database of its own (a copy of the run's template; migrating it checks
 * it is current) on a pool of `poolSize`; `dispose` drops it.
 */
async function openTestPostgres(
  poolSize: number,
): Promise<{ db: Db; url: string; dispose(): Promise<void> }> {
  // MNEMO_TEST_PG_TEMPLATE=0: migrate an empty database instead (to compare, or to rule the copy out).
  const testDb = await createTestDatabase(process.env.MNEMO_TEST_PG_TEMPLATE === '0' ? 'empty' : 'migrated');
  const db = await openPostgres(testDb.url!, { poolSize });
  try {
    await migrate(db);
  } catch (err) {
    await db.close();
    await testDb.drop();
    throw err;
  }
  return {
    db,
    url: testDb.url!,
    async dispose() {
      await db.close();
      await testDb.drop();
    },
  };
}

/**
 * A migrated PostgreSQL database of its own with a store on ONE connection (every statement
 * runs on the same prepared statements) and a second, plain client beside it (to change a table
 * or read statistics from another session). `close` drops the database.
 */
export async function oneConnectionPostgres(): Promise<{
  store: Store;
  /** The store's database: its one connection. */
  db: Db;
  admin: pg.Client;
  close(): Promise<void>;
}> {
  const { db, url, dispose } = await openTestPostgres(1);
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  return {
    store: storeOver(db),
    db,
    admin,
    async close() {
      await admin.end();
      await dispose();
    },
  };
}
