import type { Db } from './db.js';
import { LATEST_VERSION, MIGRATIONS } from './migrations/index.js';

/** Arbitrary constant: the advisory lock every mnemo process takes while migrating. */
const MIGRATION_LOCK = 72_616_001;

/**
 * The database was migrated by a newer mnemo: its schema has versions this code does not know,
 * which it could misread or damage. Every way of opening a store refuses it (serve, worker,
 * MCP stdio, the CLI's database commands); the operator upgrades mnemo instead.
 */
export class SchemaTooNewError extends Error {
  /** Stable code, also the start of the message (the CLI prints only the message). */
  readonly code = 'schema_too_new';
  constructor(
    /** The newest version recorded in the database. */
    readonly databaseVersion: number,
    /** The newest version this code knows. */
    readonly codeVersion: number,
  ) {
    super(
      `schema_too_new: the database's schema is at version ${databaseVersion}, newer than this mnemo ` +
        `knows (up to ${codeVersion}); it was migrated by a newer mnemo. Upgrade mnemo to a release that ` +
        `knows schema version ${databaseVersion} (an older mnemo must not run on this database).`,
    );
    this.name = 'SchemaTooNewError';
  }
}

/** Throws SchemaTooNewError when the database holds a version newer than the code's newest. */
function refuseNewer(versions: Iterable<number>): void {
  const newest = Math.max(0, ...versions);
  if (newest > LATEST_VERSION) throw new SchemaTooNewError(newest, LATEST_VERSION);
}

/**
 * Applies pending migrations in one transaction under an advisory lock, so several processes
 * starting at once against one PostgreSQL migrate exactly once. Returns the versions applied.
 * Refuses (SchemaTooNewError, nothing applied) a database migrated by a newer mnemo.
 */
export async function migrate(db: Db): Promise<number[]> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = new Set(
      (await tx.query<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version),
    );
    refuseNewer(done);
    const applied: number[] = [];
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      await tx.exec(m.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.version);
    }
    return applied;
  });
}

export interface AppliedMigration {
  version: number;
  name: string;
  appliedAt: Date;
  /** False for a version this code does not know (written by a newer mnemo). */
  known: boolean;
}

export interface MigrationStatus {
  /** The newest version recorded in the database (0: none). */
  current: number;
  /** The newest version this code knows. */
  latest: number;
  applied: AppliedMigration[];
  /** Migrations this code knows that the database has not applied, in order. */
  pending: { version: number; name: string }[];
  /** The database was migrated by a newer mnemo: this code refuses to open it. */
  newer: boolean;
}

/** Where the database stands against this code's migrations; reads only (creates nothing). */
export async function migrationStatus(db: Db): Promise<MigrationStatus> {
  const table = await db.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`);
  const rows = table[0]?.t
    ? await db.query<{ version: number; name: string; applied_at: Date | string }>(
        'SELECT version, name, applied_at FROM schema_migrations ORDER BY version',
      )
    : [];
  const known = new Set(MIGRATIONS.map((m) => m.version));
  const applied = rows.map((r) => ({
    version: Number(r.version),
    name: r.name,
    appliedAt: new Date(r.applied_at),
    known: known.has(Number(r.version)),
  }));
  const done = new Set(applied.map((a) => a.version));
  const current = Math.max(0, ...done);
  return {
    current,
    latest: LATEST_VERSION,
    applied,
    pending: MIGRATIONS.filter((m) => !done.has(m.version)).map((m) => ({
      version: m.version,
      name: m.name,
    })),
    newer: current > LATEST_VERSION,
  };
}

/** Throws SchemaTooNewError when the database was migrated by a newer mnemo (for opening without migrating). */
export async function refuseNewerSchema(db: Db): Promise<void> {
  const status = await migrationStatus(db);
  if (status.newer) throw new SchemaTooNewError(status.current, status.latest);
}
