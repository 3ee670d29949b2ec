/**
 * The database CPU of each of Recall's channels over the load benchmark's bank, every query new:
 * `--queries` questions of the `recall-unique` generator, analysed as Recall analyses them
 * (budget `mid`), each searched `--runs` times inside one snapshot by `searchChannels` with all
 * its channels (as Recall sends it) and with each channel alone. Prints the CPU of the
 * connection pool's backends per channels statement, and its wall time.
 *
 * The bank is seeded once and kept (`--database NAME`), like `bench/recall-answers.ts`.
 *
 * The share of the postings' pages VACUUM has marked all-visible is printed: below 100% the
 * keyword function reads the heap for each posting on the others.
 *
 * Run: `npx tsx bench/channel-cpu.ts [--database mnemo_channels] [--memories 10000]
 *   [--queries 20] [--runs 10]` (MNEMO_TEST_DATABASE_URL: the server the database is made on).
 */
import { loadavg } from 'node:os';
import pg from 'pg';
import { BUDGETS } from '../src/core/recall/budget.js';
import { analyzeQuery } from '../src/core/recall/query.js';
import { openStore } from '../src/store/open.js';
import type { ChannelQuery } from '../src/store/sql/search.js';
import { testApp } from '../test/helpers/app.js';
import { BANK, cpuSpent, databaseCpuSeconds, seedItems, variedQueries } from './load-driver.js';
import { flag } from './flags.js';

const database = flag('database', 'mnemo_channels');
const memories = Number(flag('memories', '10000'));
const queries = Number(flag('queries', '20'));
const runs = Number(flag('runs', '10'));
const NOW = new Date('2026-11-27T12:00:00Z');

const admin = process.env.MNEMO_TEST_DATABASE_URL;
if (!admin) throw new Error('MNEMO_TEST_DATABASE_URL is not set');
if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`bad database name ${database}`);
const c = new pg.Client({ connectionString: admin });
await c.connect();
const fresh = (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [database])).rowCount === 0;
if (fresh) await c.query(`CREATE DATABASE ${database}`);
const u = new URL(admin);
u.pathname = `/${database}`;

const store = await openStore({ databaseUrl: u.toString() });
const t = await testApp('postgres', { store, recallCacheSize: 0, now: () => NOW });
const path = `/v1/default/banks/${encodeURIComponent(BANK)}/memories`;
if (fresh) {
  for (let i = 0; i < memories; i += 500) {
    const r = await t.call('POST', path, { body: { items: seedItems(i, Math.min(500, memories - i)) } });
    if (r.status !== 200) throw new Error(`seeding: ${r.status} ${JSON.stringify(r.body)}`);
  }
}
const warm = await t.call('POST', `${path}/recall`, { body: { query: 'warm up', budget: 'mid' } });
if (warm.status !== 200) throw new Error(`recall: ${warm.status}`);

const other = new pg.Client({ connectionString: u.toString() });
await other.connect();
const [bank] = (
  await other.query<{ project_id: string; id: string }>(
    'SELECT project_id, id FROM banks ORDER BY memory_count DESC LIMIT 1',
  )
).rows;
// Index-only scans of postings visit the heap for each page VACUUM has not marked all-visible:
// with autovacuum off (the test server) or behind, the keyword function costs more, and
// PL/pgSQL may judge its plans differently (docs/recall.md, migration 53).
const [visible] = (
  await other.query<{ share: number }>(
    "SELECT (relallvisible::float8 / greatest(relpages, 1))::float8 AS share FROM pg_class WHERE relname = 'memory_terms'",
  )
).rows;
await other.end();
await c.end();

const mid = BUDGETS.mid;
const next = variedQueries(23);
const analysed: ChannelQuery[] = [];
for (let i = 0; i < queries; i++) {
  const q = await analyzeQuery(t.services, next(), NOW, undefined);
  analysed.push({
    vector: q.vector,
    terms: q.terms,
    window: q.window,
    graph: { probes: q.entityProbes, depth: mid.graphDepth },
  });
}
const none: ChannelQuery = { vector: null, terms: [], window: null, graph: null };
const variants: [string, (q: ChannelQuery) => ChannelQuery | null][] = [
  ['all four (as Recall)', (q) => q],
  ['semantic alone', (q) => ({ ...none, vector: q.vector })],
  ['keyword alone', (q) => ({ ...none, terms: q.terms })],
  ['temporal alone', (q) => (q.window ? { ...none, window: q.window } : null)],
  ['graph alone', (q) => ({ ...none, graph: q.graph })],
  ['all but semantic', (q) => ({ ...q, vector: null })],
];
const filter = { state: 'valid' as const };
process.stdout.write(
  `${queries} queries (${analysed.filter((q) => q.window).length} with a window), ${runs} runs each, postings all-visible ${Math.round(visible!.share * 100)}%, load ${loadavg()[0]!.toFixed(1)}\n`,
);
for (const [name, make] of variants) {
  const qs = analysed.flatMap((q) => make(q) ?? []);
  // One untimed pass: plans cached, pages in memory.
  const pass = async (n: number) => {
    for (const q of qs)
      await t.raw.readSnapshot(async (s) => {
        const opened = await s.openBankSearch(bank!.project_id, bank!.id, 100, mid.pool);
        for (let k = 0; k < n; k++)
          await s.searchChannels(bank!.project_id, bank!.id, q, filter, mid.pool, opened);
      });
  };
  await pass(1);
  const cpu0 = await databaseCpuSeconds(database);
  const wall0 = performance.now();
  await pass(runs);
  const wall = performance.now() - wall0;
  const cpu = cpuSpent(cpu0, await databaseCpuSeconds(database));
  const n = qs.length * runs;
  process.stdout.write(
    `${name.padEnd(22)} ${((cpu * 1000) / n).toFixed(2).padStart(6)} ms database CPU ${(wall / n).toFixed(2).padStart(6)} ms wall  (${n} statements)\n`,
  );
}
await t.close();
