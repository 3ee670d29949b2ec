/**
 * `mnemo migrate --status`: where a database stands (applied versions with names and dates,
 * pending ones, newer than the code), on the embedded data directory and on PostgreSQL
 * (MNEMO_DATABASE_URL). In process through the command's own functions, plus one run of the
 * real CLI for its wiring.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { formatStatus, migrateStatus } from '../../src/cli/migrate.js';
import { LATEST_VERSION, MIGRATIONS } from '../../src/store/migrations/index.js';
import { openDatabase, openStore } from '../../src/store/open.js';
import { createTestDatabase, ENGINES, seedDataDir, type TestDatabase } from '../helpers/engines.js';
import { runCli } from './cli.js';

for (const engine of ENGINES) {
  describe(`mnemo migrate --status (${engine})`, () => {
    let root: string;
    let pg: TestDatabase | undefined;
    let input: { dataDir?: string; databaseUrl?: string };

    before(async () => {
      root = mkdtempSync(join(tmpdir(), 'mnemo-migrate-cli-'));
      if (engine === 'postgres') {
        pg = await createTestDatabase();
        input = { databaseUrl: pg.url };
      } else {
        input = { dataDir: join(root, 'data') };
      }
    });
    after(async () => {
      await pg?.drop();
      rmSync(root, { recursive: true, force: true });
    });

    test('before anything: every migration pending, and nothing is created', async () => {
      const r = await migrateStatus(input);
      assert.equal(r.current, 0);
      assert.equal(r.pending.length, MIGRATIONS.length);
      assert.equal(r.newer, false);
      if (input.dataDir) assert.equal(existsSync(input.dataDir), false, 'status made no data directory');
      const text = formatStatus(r);
      assert.match(text, new RegExp(`${MIGRATIONS.length} pending`));
      assert.match(text, /applied:\n {2}\(none\)/);
      if (engine === 'postgres') assert.doesNotMatch(text, /postgres:\/\//, 'no URL (nor password) printed');
    });

    test('after migrating: applied versions with names and dates, nothing pending', async () => {
      // Migrating itself is test/store/schema-version.slow.test.ts's: the data directory starts migrated.
      if (input.dataDir) await seedDataDir(input.dataDir, 'migrated');
      else await (await openStore({ ...input, poolSize: 1 })).close();
      const r = await migrateStatus(input);
      assert.equal(r.current, LATEST_VERSION);
      assert.deepEqual(r.pending, []);
      const text = formatStatus(r);
      assert.match(text, /up to date/);
      for (const m of MIGRATIONS) {
        assert.match(
          text,
          new RegExp(`^ +${m.version} +\\d{4}-\\d\\d-\\d\\dT[^ ]+ +${literal(m.name)}$`, 'm'),
        );
      }
    });

    test('a database migrated by a newer mnemo: status says so, and the CLI refuses to migrate it', async () => {
      const db = await openDatabase({ ...input, poolSize: 1 });
      await db.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        LATEST_VERSION + 1,
        'later',
      ]);
      await db.close();
      const r = await migrateStatus(input);
      assert.equal(r.newer, true);
      const text = formatStatus(r);
      assert.match(
        text,
        new RegExp(
          `version ${LATEST_VERSION + 1}, NEWER than this mnemo \\(knows up to ${LATEST_VERSION}\\)`,
        ),
      );
      assert.match(text, /upgrade mnemo/);
      assert.match(text, /later {2}\[unknown to this mnemo\]/);

      // The real CLI: --status reads it (exit 0), plain migrate refuses it with the stable code.
      const vars: Record<string, string> = input.databaseUrl
        ? { MNEMO_DATABASE_URL: input.databaseUrl }
        : { MNEMO_DATA_DIR: input.dataDir! };
      const status = await runCli(['migrate', '--status', '--json'], vars);
      assert.equal(status.code, 0, status.stderr);
      assert.equal(JSON.parse(status.stdout).newer, true);
      const refused = await runCli(['migrate'], vars);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /schema_too_new/);
      assert.match(
        refused.stderr,
        new RegExp(`version ${LATEST_VERSION + 1}\\b.*up to ${LATEST_VERSION}\\b`),
      );
    });
  });
}

function literal(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
