/**
 * Crash safety: a `mnemo serve` (with its operations worker) is killed with SIGKILL in the
 * middle of synchronous Retains, async Retains, a document being replaced again and again and
 * banks being deleted; then it is started again on the same database. Every acknowledged write
 * must be there exactly once, nothing unacknowledged may be half there (a Retain's items all or
 * none, a document's old version or its new one), and the integrity check must pass.
 *
 * PostgreSQL (when MNEMO_TEST_DATABASE_URL is set) and the embedded engine (a PGlite data
 * directory: after the kill it must open again and pass the same check). One cycle each in
 * `npm test`; `MNEMO_SOAK=1` (npm run soak) runs 20.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { openPglite } from '../../src/store/pglite.js';
import { createTestDatabase, seedDataDir, type TestDatabase } from '../helpers/engines.js';
import { integrityProblems, type SqlRunner } from './integrity.js';
import { bankPath, call, cycles, type MnemoChild, startServe, unhandledErrors, waitFor } from './helpers.js';

const CYCLES = cycles(1, 20);

/** One Retain request: its items are stored all together or not at all. */
interface RetainGroup {
  bank: string;
  contents: string[];
  acked: boolean;
  /** Async: the operation that stores it (known once the request was acknowledged). */
  operationId?: string;
}

/** What the workload asked for and what the server acknowledged, across all cycles. */
interface Ledger {
  groups: RetainGroup[];
  /** Document replaces are sequential: the last acknowledged version and the one in flight. */
  doc: { acked: number; inFlight: number | null };
  deletes: { bank: string; items: number; acked: boolean }[];
}

const BANK = 'crash@example.com';
const DOC_BANK = 'documents';
const DOC_PARTS = 4;
const docItems = (v: number) =>
  Array.from({ length: DOC_PARTS }, (_, j) => ({
    content: `document version ${v} part ${j}`,
    fact_type: 'world',
  }));

/** Runs the workload against `url` until the server goes away. */
async function workload(url: string, ledger: Ledger, cycle: number): Promise<void> {
  let gone = false;
  /** One request; a network failure means the server is gone (killed). */
  const attempt = async (method: string, path: string, body?: unknown) => {
    try {
      return await call(url, method, path, { body, timeoutMs: 120_000 });
    } catch {
      gone = true;
      return null;
    }
  };
  const syncRetainer = async (w: number) => {
    for (let i = 0; !gone; i++) {
      const g: RetainGroup = {
        bank: BANK,
        contents: [0, 1, 2].map((j) => `c${cycle} sync w${w} r${i} item ${j} ${randomUUID().slice(0, 8)}`),
        acked: false,
      };
      ledger.groups.push(g);
      const r = await attempt('POST', bankPath(BANK, '/memories'), {
        items: g.contents.map((content) => ({ content, fact_type: 'world' })),
      });
      if (r?.status === 200) g.acked = true;
      else if (r) assert.fail(`retain answered ${r.status}: ${JSON.stringify(r.body)}`);
    }
  };
  const asyncRetainer = async (w: number) => {
    for (let i = 0; !gone; i++) {
      const g: RetainGroup = {
        bank: BANK,
        contents: [0, 1].map((j) => `c${cycle} async w${w} r${i} item ${j} ${randomUUID().slice(0, 8)}`),
        acked: false,
      };
      ledger.groups.push(g);
      const r = await attempt('POST', bankPath(BANK, '/memories'), {
        async: true,
        items: g.contents.map((content) => ({ content, fact_type: 'world' })),
      });
      if (r?.status === 200) {
        g.acked = true;
        g.operationId = r.body.operation_id;
      } else if (r) assert.fail(`async retain answered ${r.status}: ${JSON.stringify(r.body)}`);
    }
  };
  const replacer = async () => {
    while (!gone) {
      const v = ledger.doc.acked + 1;
      ledger.doc.inFlight = v;
      const r = await attempt('POST', bankPath(DOC_BANK, '/memories'), {
        document_id: 'doc',
        items: docItems(v),
      });
      if (r?.status === 200) {
        ledger.doc.acked = v;
        ledger.doc.inFlight = null;
      } else if (r) assert.fail(`document replace answered ${r.status}: ${JSON.stringify(r.body)}`);
    }
  };
  const deleter = async () => {
    for (let i = 0; !gone; i++) {
      const bank = `gone-${cycle}-${i}`;
      const items = Array.from({ length: 5 }, (_, j) => ({
        content: `${bank} fact ${j}`,
        fact_type: 'world',
      }));
      const made = await attempt('POST', bankPath(bank, '/memories'), { items });
      if (made?.status !== 200) return;
      const d = { bank, items: items.length, acked: false };
      ledger.deletes.push(d);
      const r = await attempt('DELETE', bankPath(bank));
      if (r?.status === 200) d.acked = true;
      else if (r) assert.fail(`bank delete answered ${r.status}: ${JSON.stringify(r.body)}`);
    }
  };
  await Promise.all([
    syncRetainer(0),
    syncRetainer(1),
    syncRetainer(2),
    asyncRetainer(0),
    asyncRetainer(1),
    replacer(),
    deleter(),
  ]);
}

/** Every non-observation memory text of a bank (observations are consolidation's own). */
async function factsOf(url: string, bank: string, query = ''): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = null;
  do {
    const c: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const r = await call(url, 'GET', bankPath(bank, `/memories?limit=500${query}${c}`));
    if (r.status === 404) return [];
    assert.equal(r.status, 200, JSON.stringify(r.body));
    for (const m of r.body.items) if (m.type !== 'observation') out.push(m.text);
    cursor = r.body.next_cursor;
  } while (cursor);
  return out;
}

/** Checks what the restarted server holds against the ledger. */
async function verify(url: string, ledger: Ledger): Promise<void> {
  // Acknowledged async operations must finish after the restart (the worker takes them over).
  for (const g of ledger.groups) {
    if (!g.operationId) continue;
    const op = await waitFor(
      `operation ${g.operationId}`,
      async () => {
        const r = await call(url, 'GET', bankPath(g.bank, `/operations/${g.operationId}`));
        return ['completed', 'failed', 'cancelled'].includes(r.body?.status) ? r.body : undefined;
      },
      300_000,
    );
    assert.equal(op.status, 'completed', `acknowledged operation ${g.operationId}: ${JSON.stringify(op)}`);
  }
  const counts = new Map<string, number>();
  for (const text of await factsOf(url, BANK)) counts.set(text, (counts.get(text) ?? 0) + 1);
  for (const g of ledger.groups) {
    const seen = g.contents.map((c) => counts.get(c) ?? 0);
    for (const n of seen) assert.ok(n <= 1, `an item stored ${n} times: ${g.contents.join(' | ')}`);
    if (g.acked) {
      assert.deepEqual(
        seen,
        g.contents.map(() => 1),
        `acknowledged retain lost items: ${g.contents.join(' | ')}`,
      );
    } else {
      // An unacknowledged sync retain may or may not have committed, but never in part.
      // (An unacknowledged async one may have been queued: then it ran whole, or not at all.)
      const stored = seen.filter((n) => n === 1).length;
      assert.ok(
        stored === 0 || stored === g.contents.length,
        `half a retain stored: ${g.contents.join(' | ')}`,
      );
    }
  }
  const known = new Set(ledger.groups.flatMap((g) => g.contents));
  for (const text of counts.keys()) assert.ok(known.has(text), `a memory nobody retained: ${text}`);

  // The document holds one whole version: the last acknowledged, or the one in flight at the kill.
  const doc = (await factsOf(url, DOC_BANK, '&document_id=doc')).sort();
  if (ledger.doc.acked > 0 || doc.length > 0) {
    const allowed = [ledger.doc.acked, ledger.doc.inFlight].filter((v): v is number => v !== null && v > 0);
    const match = allowed.find(
      (v) =>
        JSON.stringify(
          docItems(v)
            .map((i) => i.content)
            .sort(),
        ) === JSON.stringify(doc),
    );
    assert.ok(
      match !== undefined,
      `document holds ${JSON.stringify(doc)}; allowed versions ${allowed.join(', ')}`,
    );
    if (match !== undefined) ledger.doc.acked = match;
  }
  ledger.doc.inFlight = null;

  for (const d of ledger.deletes) {
    const profile = await call(url, 'GET', bankPath(d.bank));
    if (d.acked) assert.equal(profile.status, 404, `acknowledged delete of ${d.bank} undone`);
    else if (profile.status === 200) {
      assert.equal((await factsOf(url, d.bank)).length, d.items, `bank ${d.bank} half deleted`);
    } else assert.equal(profile.status, 404);
  }
}

/** Kills the server at a random moment once the workload has had some writes acknowledged. */
async function killMidway(server: MnemoChild, ledger: Ledger, ackedBefore: number): Promise<void> {
  await waitFor('some acknowledged writes', async () =>
    ledger.groups.filter((g) => g.acked).length >= ackedBefore + 6 ? true : undefined,
  );
  await new Promise((r) => setTimeout(r, 200 + Math.random() * 1500));
  await server.kill9();
}

interface Engine {
  name: string;
  skip: string | false;
  setup(): Promise<void>;
  /** Options for `mnemo serve` on this engine's database. */
  serveOptions(): { databaseUrl?: string; dataDir?: string };
  /** Runs `fn` over the database while no server runs (the embedded one can only be opened then). */
  withDb(fn: (db: SqlRunner) => Promise<void>): Promise<void>;
  teardown(): Promise<void>;
}

const postgres = (): Engine => {
  let db: TestDatabase;
  return {
    name: 'postgres',
    skip: process.env.MNEMO_TEST_DATABASE_URL
      ? false
      : 'MNEMO_TEST_DATABASE_URL is not set (needs PostgreSQL)',
    async setup() {
      db = await createTestDatabase();
    },
    serveOptions: () => ({ databaseUrl: db.url }),
    async withDb(fn) {
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      try {
        await fn({ query: async (q, p) => (await c.query(q, p)).rows });
      } finally {
        await c.end();
      }
    },
    teardown: async () => db?.drop(),
  };
};

const pglite = (): Engine => {
  let dir = '';
  return {
    name: 'pglite',
    skip: false,
    async setup() {
      dir = mkdtempSync(join(tmpdir(), 'mnemo-crash-'));
      await seedDataDir(dir, 'migrated'); // no initdb in a test
    },
    serveOptions: () => ({ dataDir: dir }),
    async withDb(fn) {
      // The same code path as `mnemo serve`: a damaged directory fails here with the recovery hint.
      const db = await openPglite(dir);
      try {
        await fn(db);
      } finally {
        await db.close();
      }
    },
    async teardown() {
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
};

for (const engine of [postgres(), pglite()]) {
  describe(`crash safety: kill -9 under writes (${engine.name})`, {
    skip: engine.skip,
    timeout: 3_600_000,
  }, () => {
    after(() => engine.teardown());

    test(`${CYCLES} kill -9 cycles lose no acknowledged write and half-apply none`, async (t) => {
      await engine.setup();
      const ledger: Ledger = { groups: [], doc: { acked: 0, inFlight: null }, deletes: [] };
      let server = await startServe({ ...engine.serveOptions(), worker: true });
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const ackedBefore = ledger.groups.filter((g) => g.acked).length;
        const running = workload(server.url, ledger, cycle);
        await killMidway(server, ledger, ackedBefore);
        await running;
        assert.deepEqual(unhandledErrors(server), [], 'no 500 before the kill');
        await engine.withDb(async (db) => {
          assert.deepEqual(await integrityProblems(db), [], `after kill ${cycle + 1}`);
          // The dead worker's leases (30 s) run out now: the next server takes its operations
          // over at once instead of after half a minute of waiting for them to settle.
          await db.query(`UPDATE operations SET locked_until = now() WHERE status = 'processing'`);
        });
        server = await startServe({ ...engine.serveOptions(), worker: true });
        await verify(server.url, ledger);
        await waitFor('consolidation to settle', async () => {
          const r = await call(server.url, 'GET', bankPath(BANK, '/operations?status=processing&limit=1'));
          return r.body.items.length === 0 ? true : undefined;
        });
      }
      await server.stop();
      await engine.withDb(async (db) => assert.deepEqual(await integrityProblems(db), [], 'at the end'));
      const acked = ledger.groups.filter((g) => g.acked).length;
      assert.ok(acked >= CYCLES * 6, `the workload had writes acknowledged (${acked})`);
      const ops = ledger.groups.filter((g) => g.operationId).length;
      t.diagnostic(
        `${CYCLES} kill -9 cycles: ${acked} acknowledged retains (${ops} async), ` +
          `${ledger.groups.length - acked} cut off by a kill, ${ledger.doc.acked} document versions, ` +
          `${ledger.deletes.filter((d) => d.acked).length} acknowledged bank deletions (${ledger.deletes.length} asked); all verified`,
      );
    });
  });
}
