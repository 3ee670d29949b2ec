/**
 * Backups restore to the same data (docs/backup.md):
 * - PostgreSQL: `pg_dump -Fc` of a mnemo database (pgvector included), `pg_restore` into a new
 *   database, and a `mnemo serve` on the copy answers exactly as the original did;
 * - `mnemo export` of a bank from a server, `mnemo import` into an empty embedded server: the
 *   same memories, entities and documents.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { runCli } from '../cli/cli.js';
import { createTestDatabase, seedDataDir, type TestDatabase } from '../helpers/engines.js';
import { integrityProblems } from './integrity.js';
import { ADMIN, bankPath, call, type MnemoChild, startServe } from './helpers.js';

const run = promisify(execFile);
const BANK = 'backup@example.com';

async function hasTool(name: string): Promise<boolean> {
  return run(name, ['--version']).then(
    () => true,
    () => false,
  );
}

/** What a client can see of a bank: compared before and after a restore. */
async function view(url: string, bank = BANK) {
  const memories = await call(url, 'GET', bankPath(bank, '/memories?limit=500'));
  const profile = await call(url, 'GET', bankPath(bank));
  const entities = await call(url, 'GET', bankPath(bank, '/entities?limit=500'));
  const documents = await call(url, 'GET', bankPath(bank, '/documents'));
  const recall = await call(url, 'POST', bankPath(bank, '/memories/recall'), {
    body: { query: 'Where does Alice live and what is her dog called?', budget: 'low' },
  });
  for (const r of [memories, profile, entities, documents, recall])
    assert.equal(r.status, 200, JSON.stringify(r.body));
  return {
    memories: memories.body.items.map((m: any) => ({
      id: m.id,
      text: m.text,
      type: m.type,
      entities: m.entities,
      document_id: m.document_id,
    })),
    counts: [profile.body.memory_count, profile.body.entity_count, profile.body.document_count],
    entities: entities.body.items.map((e: any) => [e.name, e.mention_count]).sort(),
    documents: documents.body.items.map((d: any) => [d.id, d.memory_count]).sort(),
    recall: recall.body.results.map((r: any) => r.id),
  };
}

async function seed(url: string): Promise<void> {
  const r = await call(url, 'POST', bankPath(BANK, '/memories'), {
    body: {
      items: [
        {
          content: 'Alice adopted a beagle named Pepper',
          entities: [{ text: 'Alice', type: 'PERSON' }],
          fact_type: 'world',
        },
        { content: 'Alice moved to Lisbon in 2021', timestamp: '2024-05-08T13:56:00Z', fact_type: 'world' },
        {
          content: 'Alice prefers tea over coffee',
          tags: ['drinks'],
          metadata: { source: 'chat' },
          fact_type: 'preference',
        },
      ],
    },
  });
  assert.equal(r.status, 200);
  const d = await call(url, 'POST', bankPath(BANK, '/memories'), {
    body: {
      document_id: 'notes',
      items: [
        { content: 'Pepper is afraid of thunder', fact_type: 'world' },
        { content: 'Pepper was born in 2020', fact_type: 'world' },
      ],
    },
  });
  assert.equal(d.status, 200);
}

const noPg = process.env.MNEMO_TEST_DATABASE_URL
  ? false
  : 'MNEMO_TEST_DATABASE_URL is not set (needs PostgreSQL)';

describe('backup and restore', { timeout: 900_000 }, () => {
  let tools = true;
  before(async () => {
    tools = (await hasTool('pg_dump')) && (await hasTool('pg_restore'));
  });

  describe('pg_dump and pg_restore', { skip: noPg }, () => {
    let source: TestDatabase;
    let copy: TestDatabase;
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-backup-'));
    after(async () => {
      await source?.drop();
      await copy?.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    test('a restored dump serves the same data', async (t) => {
      if (!tools) {
        t.skip('pg_dump or pg_restore is not installed');
        return;
      }
      source = await createTestDatabase();
      let server: MnemoChild = await startServe({ databaseUrl: source.url });
      await seed(server.url);
      const before = await view(server.url);
      await server.stop();

      const file = join(dir, 'mnemo.dump');
      await run('pg_dump', ['--format=custom', '--file', file, source.url!]);
      copy = await createTestDatabase();
      await run('pg_restore', ['--no-owner', '--exit-on-error', '--dbname', copy.url!, file]);

      server = await startServe({ databaseUrl: copy.url });
      try {
        assert.deepEqual(await view(server.url), before);
        // And the copy takes writes.
        const w = await call(server.url, 'POST', bankPath(BANK, '/memories'), {
          body: { items: [{ content: 'written after the restore' }] },
        });
        assert.equal(w.status, 200);
      } finally {
        await server.stop();
      }
      const c = new pg.Client({ connectionString: copy.url });
      await c.connect();
      try {
        assert.deepEqual(await integrityProblems({ query: async (q, p) => (await c.query(q, p)).rows }), []);
      } finally {
        await c.end();
      }
    });
  });

  test('mnemo export of a bank, mnemo import into an empty server: the same memories', async () => {
    const dirA = mkdtempSync(join(tmpdir(), 'mnemo-export-a-'));
    const dirB = mkdtempSync(join(tmpdir(), 'mnemo-export-b-'));
    const file = join(dirA, 'bank.jsonl');
    // Data directories from the migrated template (no initdb in a test); empty of banks.
    await Promise.all([seedDataDir(dirA, 'migrated'), seedDataDir(dirB, 'migrated')]);
    const [a, b] = await Promise.all([startServe({ dataDir: dirA }), startServe({ dataDir: dirB })]);
    try {
      await seed(a.url);
      const before = await view(a.url);
      // The CLI is an HTTP client of the servers: run in this process (test/cli/cli.ts).
      const cli = async (args: string[], url: string) => {
        const r = await runCli([...args, '--url', url, '--admin-token', ADMIN], {});
        return { code: r.code, out: r.stdout + r.stderr };
      };
      const exported = await cli(['export', '--bank', BANK, '--output', file], a.url);
      assert.equal(exported.code, 0, exported.out);
      const imported = await cli(['import', file], b.url);
      assert.equal(imported.code, 0, imported.out);
      const after = await view(b.url);
      const texts = (v: typeof before) => v.memories.map((m: { text: string }) => m.text).sort();
      assert.deepEqual(texts(after), texts(before));
      assert.deepEqual(after.counts, before.counts);
      assert.deepEqual(after.entities, before.entities);
      assert.deepEqual(after.documents, before.documents);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      rmSync(dirA, { recursive: true, force: true });
      rmSync(dirB, { recursive: true, force: true });
    }
  });
});
