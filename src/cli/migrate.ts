import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { type ConfigInput, loadConfig } from '../config/load.js';
import { type MigrationStatus, migrationStatus } from '../store/migrate.js';
import { LATEST_VERSION, MIGRATIONS } from '../store/migrations/index.js';
import { openDatabase } from '../store/open.js';
import { cliIo, out } from './io.js';
import { addConfigOptions, configOptions } from './options.js';
import { openConfiguredStore } from './store.js';

/** Where the configured database stands, as `mnemo migrate --status` reports it. */
export interface StatusReport extends MigrationStatus {
  /** The engine and where: `embedded (dir)` or `postgres (host/database)`; never a password. */
  database: string;
}

/** Reads the configured database's migration status without migrating or creating anything. */
export async function migrateStatus(input: ConfigInput): Promise<StatusReport> {
  const config = loadConfig(input, cliIo().env);
  if (config.databaseUrl) {
    const url = new URL(config.databaseUrl);
    const database = `postgres (${url.host}${url.pathname})`;
    const db = await openDatabase({ databaseUrl: config.databaseUrl, poolSize: 1 });
    try {
      return { database, ...(await migrationStatus(db)) };
    } finally {
      await db.close();
    }
  }
  const database = `embedded (${config.dataDir})`;
  // No data directory yet: report it empty rather than create one.
  if (!existsSync(config.dataDir)) {
    const pending = MIGRATIONS.map((m) => ({ version: m.version, name: m.name }));
    return { database, current: 0, latest: LATEST_VERSION, applied: [], pending, newer: false };
  }
  const db = await openDatabase({ dataDir: config.dataDir, embeddedCacheMb: config.embeddedCacheMb });
  try {
    return { database, ...(await migrationStatus(db)) };
  } finally {
    await db.close();
  }
}

/** The report as text, one migration a line. */
export function formatStatus(r: StatusReport): string {
  const lines = [`database: ${r.database}`];
  if (r.newer) {
    lines.push(
      `schema: version ${r.current}, NEWER than this mnemo (knows up to ${r.latest}): it was migrated by a ` +
        'newer mnemo; upgrade mnemo to use it (this version refuses to open it)',
    );
  } else if (r.pending.length > 0) {
    lines.push(
      `schema: version ${r.current}, this mnemo knows up to ${r.latest}: ${r.pending.length} pending ` +
        '(`mnemo migrate`, or starting the server, applies them)',
    );
  } else {
    lines.push(`schema: version ${r.current}, up to date`);
  }
  lines.push('applied:');
  if (r.applied.length === 0) lines.push('  (none)');
  for (const a of r.applied) {
    const unknown = a.known ? '' : '  [unknown to this mnemo]';
    lines.push(`  ${String(a.version).padStart(4)}  ${a.appliedAt.toISOString()}  ${a.name}${unknown}`);
  }
  lines.push('pending:');
  if (r.pending.length === 0) lines.push('  (none)');
  for (const p of r.pending) lines.push(`  ${String(p.version).padStart(4)}  ${p.name}`);
  return lines.join('\n');
}

/** `mnemo migrate`: applies pending migrations; `--status` only reports where the database stands. */
export function registerMigrateCommand(program: Command): void {
  addConfigOptions(
    program
      .command('migrate')
      .description(
        'apply pending database migrations and exit (--status: only show where the database stands)',
      )
      .option('--status', 'show applied and pending migrations, change nothing')
      .option('--json', 'with --status: print the status as JSON'),
  ).action(async (opts) => {
    if (opts.status) {
      const report = await migrateStatus(configOptions(opts));
      out(opts.json ? JSON.stringify(report, null, 2) : formatStatus(report));
      return;
    }
    const store = await openConfiguredStore(configOptions(opts));
    out(`migrations applied (${store.engine})`);
    await store.close();
  });
}
