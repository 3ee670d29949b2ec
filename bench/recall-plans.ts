/**
 * The plans of Recall's hot statements on a loaded bank (PostgreSQL or a PGlite data directory):
 * EXPLAIN (ANALYZE, BUFFERS) of the one statement that runs every channel, and of each channel
 * alone, for queries with and without a time window; shared buffers touched and rows read are the
 * proof that a channel is bounded by its limit rather than by the bank. Also the vector channel's
 * recall@k against an exact scan, on a sample of queries.
 *
 * Run: `npx tsx bench/recall-plans.ts --database-url URL | --data-dir DIR [--bank ID] [--plans]
 * [--only temporal,keyword,semantic,'all channels']` (the banks `bench/recall-latency.ts` loads
 * and caches; `--plans` prints each plan in full).
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { analyzeQuery } from '../src/core/recall/query.js';
import type { Services } from '../src/core/services.js';
import { createEmbedder } from '../src/embed/index.js';
import type { Db, Queryable } from '../src/store/db.js';
import { storeOver } from '../src/store/open.js';
import { openPglite } from '../src/store/pglite.js';
import { openPostgres } from '../src/store/postgres.js';
import { vectorLiteral } from '../src/store/sql/filters.js';

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const bank = flag('--bank') ?? 'bench-1000000';
const full = args.includes('--plans');
/** Which statements to explain (all channels, semantic, keyword, temporal); all when not given. */
const only = flag('--only')?.split(',');
const wanted = (label: string) => !only || only.includes(label);
const url = flag('--database-url');
const dir = flag('--data-dir');
if (!url && !dir) throw new Error('give --database-url or --data-dir');
const raw: Db = url ? await openPostgres(url, { poolSize: 2 }) : await openPglite(dir!);

/** Which statement is being explained; the next matching query is run under EXPLAIN instead of plain. */
let explaining: { label: string; match: RegExp } | null = null;
const summaries: { label: string; ms: number; hit: number; read: number; plan: string }[] = [];

async function explainIn(q: Queryable, sql: string, params: unknown[] | undefined) {
  const rows = await q.query<Record<string, string>>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
  const plan = rows.map((r) => Object.values(r)[0]).join('\n');
  const ms = Number(/Execution Time: ([\d.]+)/.exec(plan)?.[1] ?? Number.NaN);
  // The top node's buffers: everything the statement touched, found in shared_buffers (hit) or
  // read from the OS (read).
  const top = /Buffers: shared ([^\n]+)/.exec(plan)?.[1] ?? '';
  const count = (kind: string) => Number(new RegExp(`${kind}=(\\d+)`).exec(top)?.[1] ?? 0);
  summaries.push({ label: explaining!.label, ms, hit: count('hit'), read: count('read'), plan });
}

const watched = (q: Queryable): Queryable => ({
  exec: (sql) => q.exec(sql),
  async query<T>(sql: string, params?: unknown[]) {
    if (explaining?.match.test(sql)) await explainIn(q, sql, params);
    return q.query<T>(sql, params);
  },
});
const db: Db = {
  ...raw,
  engine: raw.engine,
  exec: (sql) => raw.exec(sql),
  query: (sql, params) => watched(raw).query(sql, params),
  transaction: (fn, mode) => raw.transaction((tx) => fn(watched(tx)), mode),
  ping: () => raw.ping(),
  close: () => raw.close(),
};
const store = storeOver(db);
const embedder = createEmbedder({
  cacheDir: process.env.MNEMO_CACHE_DIR ?? join(homedir(), '.cache', 'mnemo'),
});
const s: Services = { store, embedder, llm: null, now: () => new Date() };

const span = await raw.query<{ lo: Date; hi: Date; n: number }>(
  `SELECT min(mentioned_at) AS lo, max(mentioned_at) AS hi, count(*)::int AS n FROM memories WHERE bank_id = $1`,
  [bank],
);
const { lo, hi, n } = span[0]!;
const reference = new Date((new Date(lo).getTime() + new Date(hi).getTime()) / 2);
console.log(
  `bank ${bank}: ${n} memories, said ${new Date(lo).toISOString()} .. ${new Date(hi).toISOString()}; reference ${reference.toISOString()}`,
);

const QUERIES = [
  'What did Caroline say about the garden yesterday?',
  'What happened with the museum last month?',
  'Does Melanie like painting?',
  'When did Jon go to the concert?',
];
const POOL = 100;
for (const query of QUERIES) {
  const q = await analyzeQuery(s, query, reference, undefined);
  const cq = {
    vector: q.vector,
    terms: q.terms,
    window: q.window,
    graph: { probes: q.entityProbes, depth: 1 },
  };
  const run = async (label: string, match: RegExp, f: () => Promise<unknown>) => {
    if (!wanted(label)) return;
    explaining = { label: `${query} | ${label}`, match };
    await f();
    explaining = null;
  };
  await run('all channels', /^SELECT ch, string_agg/, () =>
    store.searchChannels('default', bank, cq, {}, POOL),
  );
  await run('semantic', /<=>/, () => store.semanticSearch('default', bank, q.vector, {}, POOL));
  await run('keyword', /mnemo_keyword_search/, () => store.keywordSearch('default', bank, q.terms, {}, POOL));
  if (q.window) {
    const w = q.window;
    await run('temporal', /inside AS/, () => store.temporalSearch('default', bank, w, {}, POOL));
  }
}
for (const x of summaries) {
  console.log(
    `${x.label}: ${x.ms.toFixed(1)} ms, ${x.hit + x.read} shared buffers (${x.hit} hit, ${x.read} read)`,
  );
  if (full) console.log(`${x.plan}\n`);
}

// Recall@k of the vector channel (HNSW, bank filter, iterative scan) against an exact scan.
const K = 10;
let found = 0;
const SAMPLE = wanted('semantic') ? 20 : 0;
for (let i = 0; i < SAMPLE; i++) {
  const q = await analyzeQuery(s, `${QUERIES[i % QUERIES.length]} ${i}`, reference, undefined);
  const got = await store.semanticSearch('default', bank, q.vector, {}, K);
  const exact = await raw.transaction(async (tx) => {
    await tx.query('SET LOCAL enable_indexscan = off');
    return tx.query<{ id: string }>(
      `SELECT id::text AS id FROM memories WHERE project_id = 'default' AND bank_id = $1
       ORDER BY embedding <=> $2::vector LIMIT ${K}`,
      [bank, vectorLiteral(q.vector)],
    );
  });
  const want = new Set(exact.map((r) => r.id));
  found += got.filter((h) => want.has(h.id)).length;
}
if (SAMPLE)
  console.log(`vector recall@${K} against exact, ${SAMPLE} queries: ${(found / (SAMPLE * K)).toFixed(3)}`);
await raw.close();
