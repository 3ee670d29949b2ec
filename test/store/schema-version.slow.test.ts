/**
 * How a database is checked against the migration list (the list itself:
 * `migrations.test.ts`): `migrationStatus` reports where one stands, and a database migrated by
 * a newer mnemo is refused on both engines, nothing applied. Slow tier: the embedded engine's
 * checks open a data directory on disk six times (~1.5 s of CPU each).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { migrate, migrationStatus, SchemaTooNewError } from '../../src/store/migrate.js';
import { LATEST_VERSION, MIGRATIONS } from '../../src/store/migrations/index.js';
import { openDatabase, openStore, type OpenOptions } from '../../src/store/open.js';
import { createTestDatabase, ENGINES, seedDataDir, type TestDatabase } from '../helpers/engines.js';

for (const engine of ENGINES) {
  describe(`schema version checks (${engine})`, () => {
    let dir: string | undefined;
    let pg: TestDatabase | undefined;
    let opts: OpenOptions;

    before(async () => {
      if (engine === 'postgres') {
        pg = await createTestDatabase();
        opts = { databaseUrl: pg.url, poolSize: 1 };
      } else {
        dir = mkdtempSync(join(tmpdir(), 'mnemo-migs-'));
        await seedDataDir(dir, 'empty');
        opts = { dataDir: dir };
      }
    });
    after(async () => {
      await pg?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    /** Runs `fn` on a bare connection to the test database. */
    async function withDb<T>(fn: (db: Awaited<ReturnType<typeof openDatabase>>) => Promise<T>): Promise<T> {
      const db = await openDatabase(opts);
      try {
        return await fn(db);
      } finally {
        await db.close();
      }
    }

    test('status of an empty database: nothing applied, everything pending; reading creates nothing', async () => {
      await withDb(async (db) => {
        const status = await migrationStatus(db);
        assert.equal(status.current, 0);
        assert.deepEqual(status.applied, []);
        assert.deepEqual(
          status.pending.map((p) => p.version),
          MIGRATIONS.map((m) => m.version),
        );
        assert.equal(status.newer, false);
        const t = await db.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`);
        assert.equal(t[0]!.t, null);
      });
    });

    test('status after migrating: every version applied with its name and date, none pending; re-running applies nothing', async () => {
      const store = await openStore(opts);
      await store.close();
      await withDb(async (db) => {
        const status = await migrationStatus(db);
        assert.equal(status.current, LATEST_VERSION);
        assert.deepEqual(
          status.applied.map((a) => [a.version, a.name, a.known]),
          MIGRATIONS.map((m) => [m.version, m.name, true]),
        );
        assert.ok(
          status.applied.every((a) => a.appliedAt instanceof Date && !Number.isNaN(a.appliedAt.getTime())),
        );
        assert.deepEqual(status.pending, []);
        assert.equal(status.newer, false);
        assert.deepEqual(await migrate(db), [], 're-running applies nothing');
      });
    });

    test('a database migrated by a newer mnemo is refused, naming both versions; nothing is applied', async () => {
      const future = LATEST_VERSION + 2;
      await withDb(async (db) => {
        await db.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
          future,
          'from the future',
        ]);
        // A known migration missing too: a refused database must not be migrated either.
        await db.query('DELETE FROM schema_migrations WHERE version = $1', [LATEST_VERSION]);
      });
      const refused = (err: unknown) => {
        assert.ok(err instanceof SchemaTooNewError);
        assert.equal(err.code, 'schema_too_new');
        assert.equal(err.databaseVersion, future);
        assert.equal(err.codeVersion, LATEST_VERSION);
        assert.match(err.message, new RegExp(`version ${future}\\b`));
        assert.match(err.message, new RegExp(`up to ${LATEST_VERSION}\\b`));
        assert.match(err.message, /upgrade mnemo/i);
        return true;
      };
      await assert.rejects(openStore(opts), refused);
      await assert.rejects(openStore({ ...opts, migrate: false }), refused);
      await withDb(async (db) => {
        await assert.rejects(migrate(db), refused);
        const status = await migrationStatus(db);
        assert.equal(status.newer, true);
        assert.equal(status.current, future);
        assert.deepEqual(
          status.applied.filter((a) => !a.known).map((a) => [a.version, a.name]),
          [[future, 'from the future']],
        );
        assert.deepEqual(
          status.pending.map((p) => p.version),
          [LATEST_VERSION],
          'the refusal applied nothing',
        );
      });
    });
  });
}
