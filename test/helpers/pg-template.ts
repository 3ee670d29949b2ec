/**
 * The run's migrated PostgreSQL template: each PostgreSQL test database that starts migrated
 * is a `CREATE DATABASE … TEMPLATE` copy of it instead of an empty database migrated afresh
 * (every migration, each its own statements, replayed per test file).
 *
 * - Named per run: the admin database's name (MNEMO_TEST_DATABASE_URL's), the run's id
 *   (MNEMO_TEST_RUN, set by `test/run.ts` for all its processes; else this process's own) and a
 *   digest of the migrations. Runs of other branches on the same server never share one.
 * - Built once: under an advisory lock on the admin database, so the run's parallel processes
 *   wait for the first to build it. Ready means `datistemplate`: a template left half-built by
 *   a killed process is not marked, and is dropped and built again.
 * - Nobody stays connected to it (a copy fails while another session is connected to its
 *   source): it is migrated on one connection, closed, then closed to connections
 *   (`ALLOW_CONNECTIONS false`).
 * - Dropped at the end of the run by `test/run.ts` (`dropRunTemplates`), or, in a process
 *   outside it, when the process is about to exit.
 */
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate } from '../../src/store/migrate.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { openPostgres } from '../../src/store/postgres.js';

/** The advisory lock (one per template name) taken while building; any number unlike the app's. */
const LOCK_SPACE = 0x6d74706c; // 'mtpl'

function adminUrl(): string {
  const admin = process.env.MNEMO_TEST_DATABASE_URL;
  if (!admin) throw new Error('MNEMO_TEST_DATABASE_URL is not set');
  return admin;
}

/** This process's run: `test/run.ts`'s, or its own when started otherwise. */
let ownRun: string | undefined;
function runId(): string {
  const given = process.env.MNEMO_TEST_RUN;
  if (given) return given;
  if (!ownRun) {
    ownRun = randomBytes(4).toString('hex');
    // Not under test/run.ts: nobody else will drop it, so this process does, when done.
    let dropping = false;
    process.on('beforeExit', () => {
      if (dropping) return;
      dropping = true;
      dropRunTemplates().catch(() => {});
    });
  }
  return ownRun;
}

/** The name of the run's template for the current migrations (at most 63 bytes, lower case). */
export function templateName(run = runId()): string {
  const admin = new URL(adminUrl()).pathname.slice(1) || 'postgres';
  const digest = createHash('sha256')
    .update(JSON.stringify(MIGRATIONS.map((m) => [m.version, m.name, m.sql])))
    .digest('hex')
    .slice(0, 10);
  const prefix = admin
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 30);
  return `${prefix}_tpl_${run}_${digest}`;
}

/** The prefix every template of a run shares, whatever its migrations. */
function runPrefix(run: string): string {
  return templateName(run).replace(/_[0-9a-f]+$/, '_');
}

async function withAdmin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const ready = new Map<string, Promise<string>>();

/** The run's migrated template, built if no process of the run has built it yet. */
export function migratedPostgresTemplate(): Promise<string> {
  const name = templateName();
  let made = ready.get(name);
  if (!made) {
    made = buildTemplate(name);
    ready.set(name, made);
    made.catch(() => ready.delete(name));
  }
  return made;
}

/**
 * Builds the migrated template `name` unless it is built (another process's, or this one's):
 * one builder at a time per name, under an advisory lock. Exported for its test.
 */
export async function buildTemplate(name: string): Promise<string> {
  const id = pg.escapeIdentifier(name);
  await withAdmin(async (admin) => {
    await admin.query('SELECT pg_advisory_lock($1, hashtext($2))', [LOCK_SPACE, name]);
    try {
      const [row] = (
        await admin.query<{ datistemplate: boolean }>(
          'SELECT datistemplate FROM pg_database WHERE datname = $1',
          [name],
        )
      ).rows;
      if (row?.datistemplate) return; // another process of the run built it
      if (row) await admin.query(`DROP DATABASE ${id} WITH (FORCE)`); // half-built
      await admin.query(`CREATE DATABASE ${id}`);
      const url = new URL(adminUrl());
      url.pathname = `/${name}`;
      const db = await openPostgres(url.toString(), { poolSize: 1 });
      try {
        await migrate(db);
      } finally {
        await db.close();
      }
      await admin.query(`ALTER DATABASE ${id} WITH ALLOW_CONNECTIONS false IS_TEMPLATE true`);
    } finally {
      await admin.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LOCK_SPACE, name]);
    }
  });
  return name;
}

/**
 * Drops the templates of the run (`run`: this process's by default); `test/run.ts` calls it
 * when its tests are done. The copies are test databases, each dropped by its test.
 */
export async function dropRunTemplates(run = runId()): Promise<void> {
  if (!process.env.MNEMO_TEST_DATABASE_URL) return;
  const prefix = runPrefix(run);
  await withAdmin(async (admin) => {
    const { rows } = await admin.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE starts_with(datname, $1)',
      [prefix],
    );
    for (const { datname } of rows) {
      const id = pg.escapeIdentifier(datname);
      await admin.query(`ALTER DATABASE ${id} IS_TEMPLATE false`);
      await admin.query(`DROP DATABASE IF EXISTS ${id} WITH (FORCE)`);
      ready.delete(datname);
    }
  });
}
