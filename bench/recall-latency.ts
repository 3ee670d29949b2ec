/**
 * Recall latency and throughput over HTTP on banks of 1k, 10k and 100k synthetic chat
 * memories, on PGlite and (with MNEMO_BENCH_DATABASE_URL or MNEMO_TEST_DATABASE_URL)
 * PostgreSQL; p50/p95/p99 and requests per second at concurrency 1 and 16; and the cost floor
 * measured on the same data in the same run: the bare vector query (HNSW, or exact below
 * EXACT_SEARCH_LIMIT) and the bare keyword query (BM25), so that recall's overhead is a ratio.
 *
 * The three banks live in one database (the vector index is shared, so the bank filter is
 * exercised). Loading bypasses HTTP (store writes in batches, terms and neighbour context as
 * Retain computes them); the vector index is built after loading, as a bulk import would. The
 * loaded database is cached in the temp directory (`--fresh` rebuilds it).
 *
 * Run: `npx tsx bench/recall-latency.ts [--sizes 1000,10000,100000] [--engines pglite,postgres] [--fresh]`
 * (or `npm run bench -- recall-latency`). `--database NAME` uses that PostgreSQL database instead
 * of the cached one; `--load-only N` loads the first N memories of each bank (at the density of
 * its full size), builds no index and measures nothing: the seed `recall-latency-1m.sql` copies.
 * `--concurrency 1` (or 16) measures only that one.
 */
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { createLogger } from '../src/api/logger.js';
import { startServer } from '../src/runtime/server.js';
import { loadConfig } from '../src/config/load.js';
import { addNeighbourContext } from '../src/core/recall/context-terms.js';
import type { Services } from '../src/core/services.js';
import type { NewMemory } from '../src/core/types.js';
import { createEmbedder } from '../src/embed/index.js';
import { openGloveCache } from '../src/embed/glove-cache.js';
import { classifyFactType } from '../src/text/fact-type.js';
import { termFrequencies } from '../src/text/terms.js';
import { findDates } from '../src/text/temporal.js';
import type { Db } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';
import { storeOver } from '../src/store/open.js';
import { openPglite } from '../src/store/pglite.js';
import { openPostgres } from '../src/store/postgres.js';
import { HNSW_DIMENSIONS } from '../src/store/sql/search.js';

/** Bump when the generated data changes, so cached databases are rebuilt. */
const DATA_VERSION = 1;
const TOKEN = 'bench-latency-admin';
const BATCH = 1000;
const TURNS_PER_SESSION = 20;
/** Requests timed per size and concurrency (after warm-up). */
const REQUESTS = { 1: 200, 16: 400 } as const;
const WARMUP = 20;
const FLOOR_RUNS = 100;

const SPEAKERS = ['Caroline', 'Melanie', 'Jon', 'Gina', 'Maria', 'John', 'Joanna', 'Nate'];
const PEOPLE = [
  'my sister',
  'my mom',
  'my dad',
  'my brother',
  'our neighbour',
  'my boss',
  'my best friend',
  'the kids',
];
const OPENERS = [
  'Yesterday',
  'Last week',
  'This morning',
  'On Saturday',
  'Two days ago',
  'Last month',
  'Tonight',
  'Recently',
];
const VERBS = [
  'went to',
  'talked about',
  'signed up for',
  'finished',
  'started',
  'planned',
  'visited',
  'cooked',
  'painted',
  'read about',
  'bought',
  'cleaned',
  'fixed',
  'wrote about',
  'watched',
  'practised',
];
const FEELINGS = [
  'it was amazing',
  'I felt calm',
  'it was exhausting',
  'we laughed a lot',
  'I learned a lot',
  'it was hard but worth it',
];

/** Deterministic pseudo-random numbers (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Content words from the GloVe vocabulary (ranks 300-30000), sampled with a Zipf-like skew. */
async function contentWords(): Promise<string[]> {
  const cache = await openGloveCache(process.env.MNEMO_CACHE_DIR ?? join(homedir(), '.cache', 'mnemo'));
  const v = cache.vocabulary;
  const words: string[] = [];
  for (let r = 300; r < Math.min(30_000, v.size); r++) {
    const w = String.fromCharCode(...v.chars.subarray(v.starts[r]!, v.starts[r + 1]!));
    if (/^[a-z]{4,12}$/.test(w)) words.push(w);
  }
  return words;
}

function pick<T>(list: readonly T[], rnd: () => number, skew = 1): T {
  return list[Math.floor(list.length * rnd() ** (1 + skew))]!;
}

/** A chat turn of 12-40 words: speaker, when, what, with whom, a feeling, a detail. */
function chatTurn(words: string[], rnd: () => number, speaker: string): string {
  const topic = () => `${pick(words, rnd, 1.5)} ${pick(words, rnd, 1.5)}`;
  const parts = [
    `${speaker}: ${pick(OPENERS, rnd, 0)} I ${pick(VERBS, rnd, 0)} the ${topic()} with ${pick(PEOPLE, rnd, 0)}`,
    `and ${pick(FEELINGS, rnd, 0)}.`,
  ];
  if (rnd() < 0.6) parts.push(`The ${pick(words, rnd, 1.5)} reminded me of ${topic()}.`);
  if (rnd() < 0.3) parts.push(`Have you ever tried ${topic()}?`);
  return parts.join(' ');
}

/** Questions of the shape agents ask before a turn, over the same vocabulary. */
function queries(words: string[], n: number): string[] {
  const rnd = random(7);
  return Array.from({ length: n }, (_, i) => {
    const who = pick(SPEAKERS, rnd, 0);
    const w = pick(words, rnd, 1.5);
    switch (i % 4) {
      case 0:
        return `What did ${who} say about the ${w}?`;
      case 1:
        return `When did ${who} go to the ${w} ${pick(words, rnd, 1.5)}?`;
      case 2:
        return `Does ${who} like ${w}?`;
      default:
        return `What happened with the ${w} last month?`;
    }
  });
}

interface Engine {
  name: 'pglite' | 'postgres';
  db: Db;
  close(): Promise<void>;
  /** Where a server reaches the same data. */
  config: { dataDir?: string; databaseUrl?: string };
}

const bankOf = (size: number) => `bench-${size}`;

async function loaded(db: Db, sizes: number[]): Promise<boolean> {
  const rows = await db.query<{ id: string; memory_count: number }>(
    `SELECT id, memory_count FROM banks WHERE project_id = 'default'`,
  );
  const have = new Map(rows.map((r) => [r.id, r.memory_count]));
  return sizes.every((n) => have.get(bankOf(n)) === n);
}

/** Fills one bank with `size` turns in sessions of 20, two years of chat. */
async function fill(s: Services, size: number, words: string[], upTo = size): Promise<void> {
  const rnd = random(size);
  const start = Date.UTC(2023, 0, 1);
  const step = (2 * 365 * 86_400_000) / size;
  const end = Math.min(size, upTo);
  for (let from = 0; from < end; from += BATCH) {
    const memories: NewMemory[] = [];
    for (let i = from; i < Math.min(end, from + BATCH); i++) {
      const session = Math.floor(i / TURNS_PER_SESSION);
      const text = chatTurn(words, rnd, SPEAKERS[(session * 2 + (i % 2)) % SPEAKERS.length]!);
      const mentioned = new Date(start + i * step);
      const date = findDates(text, mentioned)[0];
      memories.push({
        id: randomUUID(),
        type: classifyFactType(text),
        text,
        context: null,
        occurred_start: date?.start ?? null,
        occurred_end: date?.end ?? null,
        mentioned_at: mentioned,
        tags: [],
        metadata: { session: `s${session}` },
        document_id: null,
        chunk_id: null,
        content_hash: randomUUID(),
        embedding: new Float32Array(0),
        terms: termFrequencies(text),
        entities: [],
      });
    }
    await addNeighbourContext(s, 'default', bankOf(size), memories);
    const vectors = await s.embedder.embed(memories.map((m) => m.text));
    memories.forEach((m, i) => {
      m.embedding = vectors[i]!;
    });
    await s.store.insertMemories('default', bankOf(size), memories);
  }
}

async function openEngine(
  name: 'pglite' | 'postgres',
  sizes: number[],
  fresh: boolean,
  database?: string,
): Promise<Engine> {
  const tag = `v${DATA_VERSION}-${sizes.join('-')}`;
  if (name === 'pglite') {
    const dataDir = join(tmpdir(), 'mnemo-bench-cache', `latency-${tag}`);
    if (fresh) rmSync(dataDir, { recursive: true, force: true });
    mkdirSync(dataDir, { recursive: true });
    const db = await openPglite(dataDir);
    return { name, db, config: { dataDir }, close: () => db.close() };
  }
  const admin = process.env.MNEMO_BENCH_DATABASE_URL ?? process.env.MNEMO_TEST_DATABASE_URL;
  if (!admin) throw new Error('set MNEMO_BENCH_DATABASE_URL (or MNEMO_TEST_DATABASE_URL) for PostgreSQL');
  const dbName = database ?? `mnemo_bench_latency_${tag.replace(/-/g, '_')}`;
  if (!/^[a-z_][a-z0-9_]*$/.test(dbName))
    throw new Error(`--database ${dbName}: lower-case letters, digits and _`);
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  if (fresh) await client.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [dbName]);
  if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${dbName}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${dbName}`;
  const serverUrl = url.toString();
  url.searchParams.set('options', '-c session_replication_role=replica');
  const db = await openPostgres(url.toString(), { poolSize: 4 });
  return { name, db, config: { databaseUrl: serverUrl }, close: () => db.close() };
}

/** Loads the banks unless the cached database has them, and builds the vector indexes Retain would have queued. */
async function prepare(
  engine: Engine,
  sizes: number[],
  embedder: Services['embedder'],
  log: (m: string) => void,
  loadOnly?: number,
) {
  await migrate(engine.db);
  if (loadOnly !== undefined) return loadBanks(engine, sizes, embedder, log, loadOnly);
  if (!(await loaded(engine.db, sizes))) await loadBanks(engine, sizes, embedder, log);
  // Banks that are a small share of the table get their own index, as Retain would queue it.
  const store = storeOver(engine.db);
  for (const size of sizes) {
    const dims = await store.wantedBankIndex('default', bankOf(size));
    if (dims === null) continue;
    const started = performance.now();
    await store.buildBankIndex('default', bankOf(size), dims);
    log(
      `${engine.name}: own index of the ${size}-memory bank built in ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );
  }
}

async function loadBanks(
  engine: Engine,
  sizes: number[],
  embedder: Services['embedder'],
  log: (m: string) => void,
  loadOnly?: number,
) {
  const store = storeOver(engine.db);
  const s: Services = { store, embedder, llm: null, now: () => new Date() };
  await engine.db.exec(HNSW_DIMENSIONS.map((d) => `DROP INDEX IF EXISTS memories_hnsw_${d};`).join('\n'));
  // Bulk load: foreign key checks off (the generator writes consistent rows); they cost
  // most of an embedded insert. PostgreSQL's loader connection sets this in its URL.
  if (engine.name === 'pglite') await engine.db.exec('SET session_replication_role = replica');
  const words = await contentWords();
  for (const size of sizes) {
    const started = performance.now();
    await store.deleteBank('default', bankOf(size));
    await store.ensureBank('default', bankOf(size), {});
    await store.updateBank('default', bankOf(size), { embedder: embedder.id });
    await fill(s, size, words, loadOnly);
    log(
      `${engine.name}: loaded ${Math.min(size, loadOnly ?? size)} memories in ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );
  }
  if (loadOnly !== undefined) return;
  const started = performance.now();
  await engine.db.exec(
    HNSW_DIMENSIONS.map(
      (d) =>
        `CREATE INDEX memories_hnsw_${d} ON memories USING hnsw ((embedding::vector(${d})) vector_cosine_ops) WHERE vector_dims(embedding) = ${d};`,
    ).join('\n'),
  );
  if (engine.name === 'pglite') await engine.db.exec('SET session_replication_role = DEFAULT');
  await engine.db.exec('ANALYZE');
  log(`${engine.name}: HNSW index built in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** One POST over a keep-alive agent; the JSON reply. */
function postJson(agent: Agent, url: string, body: unknown): Promise<{ status: number; text: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Recall requests over HTTP at a concurrency; latencies in ms, requests per second, retried resets. */
async function load(url: string, bank: string, qs: string[], concurrency: number, total: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  let retries = 0;
  const post = async (query: string) => {
    const t0 = performance.now();
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await postJson(agent, `${url}/v1/default/banks/${bank}/memories/recall`, { query });
        if (res.status !== 200) throw new Error(`recall ${res.status}: ${res.text}`);
        return performance.now() - t0;
      } catch (err) {
        // A kept-alive socket the server closed meanwhile fails; recall is safe to repeat.
        if (attempt >= 3 || !/ECONNRESET|socket hang up|EPIPE/.test(String(err))) throw err;
        retries++;
      }
    }
  };
  try {
    for (let i = 0; i < WARMUP; i++) await post(qs[i % qs.length]!);
    const latencies: number[] = [];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < total) {
          const i = next++;
          latencies.push(await post(qs[i % qs.length]!));
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    return {
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      p99: percentile(latencies, 99),
      rps: total / seconds,
      retries,
    };
  } finally {
    agent.destroy();
  }
}

/** The bare channel queries, straight on the store: the floor recall builds on. */
async function floor(s: Services, bank: string, qs: string[]) {
  const { analyzeQuery } = await import('../src/core/recall/query.js');
  const analyzed = await Promise.all(
    qs.slice(0, FLOOR_RUNS).map((q) => analyzeQuery(s, q, new Date(), undefined)),
  );
  const time = async (f: (i: number) => Promise<unknown>) => {
    await f(0);
    const out: number[] = [];
    for (let i = 0; i < analyzed.length; i++) {
      const t0 = performance.now();
      await f(i);
      out.push(performance.now() - t0);
    }
    return percentile(
      out.sort((a, b) => a - b),
      50,
    );
  };
  return {
    vector: await time((i) => s.store.semanticSearch('default', bank, analyzed[i]!.vector, {}, 100)),
    keyword: await time((i) => s.store.keywordSearch('default', bank, analyzed[i]!.terms, {}, 100)),
  };
}

export interface LatencyOptions {
  sizes?: number[];
  engines?: ('pglite' | 'postgres')[];
  fresh?: boolean;
  /** PostgreSQL database name instead of the cached one. */
  database?: string;
  /** Load this many memories of each bank, then stop: no index, no measurement. */
  loadOnly?: number;
  /** Which of the concurrencies 1 and 16 to measure (both when not given). */
  concurrencies?: (1 | 16)[];
  log?: (m: string) => void;
}

/** Rows per engine, size and concurrency. */
export async function benchRecallLatency(
  opts: LatencyOptions = {},
): Promise<Record<string, string | number>[]> {
  const sizes = opts.sizes ?? [1000, 10_000, 100_000];
  const pgUrl = process.env.MNEMO_BENCH_DATABASE_URL ?? process.env.MNEMO_TEST_DATABASE_URL;
  const engines = opts.engines ?? (pgUrl ? ['pglite', 'postgres'] : ['pglite']);
  const log = opts.log ?? (() => {});
  const embedder = createEmbedder({
    cacheDir: process.env.MNEMO_CACHE_DIR ?? join(homedir(), '.cache', 'mnemo'),
  });
  const words = await contentWords();
  const qs = queries(words, 400);
  const rows: Record<string, string | number>[] = [];
  for (const name of engines) {
    const engine = await openEngine(name, sizes, opts.fresh ?? false, opts.database);
    try {
      await prepare(engine, sizes, embedder, log, opts.loadOnly);
    } finally {
      await engine.close();
    }
    if (opts.loadOnly !== undefined) continue;
    // The server opens the same database itself, as `mnemo serve` would.
    const config = loadConfig(
      // No answer cache: every request here is a computed Recall (the cache is measured by `load`).
      {
        port: 0,
        host: '127.0.0.1',
        adminToken: TOKEN,
        logLevel: 'silent',
        worker: false,
        recallCacheSize: 0,
        ...engine.config,
      },
      {},
    );
    const server = await startServer(config, createLogger('silent'));
    try {
      for (const size of sizes) {
        const bank = bankOf(size);
        const f = await floor(server.services, bank, qs);
        for (const concurrency of opts.concurrencies ?? ([1, 16] as const)) {
          const r = await load(server.url, bank, qs, concurrency, REQUESTS[concurrency]);
          rows.push({
            engine: name,
            memories: size,
            concurrency,
            'p50 ms': round(r.p50),
            'p95 ms': round(r.p95),
            'p99 ms': round(r.p99),
            rps: round(r.rps),
            'vector floor p50 ms': round(f.vector),
            'keyword floor p50 ms': round(f.keyword),
            'p50 / floor': concurrency === 1 ? round(r.p50 / (f.vector + f.keyword)) : '',
            retried: r.retries,
          });
          log(JSON.stringify(rows.at(-1)));
        }
      }
    } finally {
      await server.close();
    }
  }
  const load1 = loadavg()[0]!;
  rows.push({ engine: `load average ${load1.toFixed(1)} on this machine during the run` });
  return rows;
}

const round = (x: number) => Math.round(x * 10) / 10;

/** Command-line flags of a direct run. */
export function latencyArgs(argv: string[]): LatencyOptions {
  const opts: LatencyOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--sizes') opts.sizes = (argv[++i] ?? '').split(',').map(Number);
    else if (a === '--engines') opts.engines = (argv[++i] ?? '').split(',') as LatencyOptions['engines'];
    else if (a === '--fresh') opts.fresh = true;
    else if (a === '--database') opts.database = argv[++i];
    else if (a === '--load-only') opts.loadOnly = Number(argv[++i]);
    else if (a === '--concurrency')
      opts.concurrencies = (argv[++i] ?? '').split(',').map(Number) as LatencyOptions['concurrencies'];
  }
  return opts;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const opts = latencyArgs(process.argv.slice(2));
  const rows = await benchRecallLatency({ ...opts, log: (m) => process.stderr.write(`${m}\n`) });
  console.table(rows);
  if (process.env.MNEMO_BENCH_OUT) writeFileSync(process.env.MNEMO_BENCH_OUT, JSON.stringify(rows, null, 2));
}
