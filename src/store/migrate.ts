import type { Db } from './db.js';
import { MIGRATIONS } from './sql/migrations.js';

/** Arbitrary constant: the advisory lock every mnemo process takes while migrating. */
const MIGRATION_LOCK = 72_616_001;

/**
 * Applies pending migrations in one transaction under an advisory lock, so several processes
 * starting at once against one PostgreSQL migrate exactly once. Returns the versions applied.
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

/** The newest migration version the code knows, and the one the database has. */
export async function schemaStatus(db: Db): Promise<{ expected: number; current: number }> {
  const expected = MIGRATIONS.at(-1)?.version ?? 0;
  const rows = await db.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
  return { expected, current: rows[0]?.v ?? 0 };
}
