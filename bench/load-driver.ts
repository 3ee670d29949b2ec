/**
 * Shared by the load benchmark and the soak: a `mnemo serve` child process on a fresh database
 * (embedded in a temp directory, or a new PostgreSQL database), a bank seeded with synthetic
 * memories through Retain, request mixes for autocannon, and the server's resident memory read
 * from /proc.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Request } from 'autocannon';
import { ADMIN, bankPath, call, type MnemoChild, startServe } from '../test/stress/helpers.js';

export type EngineName = 'pglite' | 'postgres';
export const BANK = 'load@example.com';

/** A PostgreSQL URL to create benchmark databases from, if any. */
export const adminDatabaseUrl = () =>
  process.env.MNEMO_BENCH_DATABASE_URL ?? process.env.MNEMO_TEST_DATABASE_URL;

export interface BenchServer {
  server: MnemoChild;
  url: string;
  /** PostgreSQL: the benchmark's own database (its backends' CPU is the database's share). */
  database?: string;
  /**
   * PostgreSQL: `VACUUM (ANALYZE)` of that database, as autovacuum would after a load (without
   * it an index-only scan of a bank just seeded reads the heap for every posting).
   */
  vacuum?(): Promise<void>;
  close(): Promise<void>;
}

/** Starts `mnemo serve` (with its worker unless `worker: false`) on a fresh database of the engine. */
export async function startBenchServer(
  engine: EngineName,
  { worker = true, env = {} as Record<string, string> } = {},
): Promise<BenchServer> {
  if (engine === 'pglite') {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-load-'));
    const server = await startServe({ dataDir: dir, worker, env });
    return {
      server,
      url: server.url,
      async close() {
        await server.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const admin = adminDatabaseUrl();
  if (!admin) throw new Error('postgres needs MNEMO_BENCH_DATABASE_URL or MNEMO_TEST_DATABASE_URL');
  const name = `mnemo_load_${randomBytes(5).toString('hex')}`;
  const run = async (sql: string, connectionString = admin) => {
    const c = new pg.Client({ connectionString });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const server = await startServe({ databaseUrl: url.toString(), worker, env });
  return {
    server,
    url: server.url,
    database: name,
    vacuum: () => run('VACUUM (ANALYZE)', url.toString()),
    async close() {
      await server.stop();
      await run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

const NAMES = [
  'Alice',
  'Bob',
  'Carmen',
  'Deepak',
  'Erin',
  'Farid',
  'Grace',
  'Hiro',
  'Ines',
  'Jonas',
  'Kemi',
  'Liam',
];
/** Verbs as the memories use them (past) and as a question asks with "did" (base form). */
const VERBS: [past: string, base: string][] = [
  ['adopted', 'adopt'],
  ['visited', 'visit'],
  ['cooked', 'cook'],
  ['painted', 'paint'],
  ['repaired', 'repair'],
  ['sold', 'sell'],
  ['borrowed', 'borrow'],
  ['photographed', 'photograph'],
  ['found', 'find'],
  ['planted', 'plant'],
];
const THINGS = [
  'a beagle named Pepper',
  'the old bicycle',
  'a lemon tree',
  'her grandmother’s piano',
  'a sourdough starter',
  'the lighthouse in Porto',
  'a vintage camera',
  'three tomato plants',
  'the blue canoe',
  'a chess set from Riga',
];
const PLACES = [
  'in Lisbon',
  'at the market',
  'near the harbour',
  'in the garden',
  'downtown',
  'at work',
  'in Kyoto',
  'by the lake',
];
const WHEN = [
  'last week',
  'yesterday',
  'in March 2023',
  'on 4 July 2022',
  'two days ago',
  'this morning',
  'in the spring',
];

/** A deterministic synthetic memory sentence. */
export function sentence(i: number): string {
  const pick = <T>(xs: T[], k: number) => xs[k % xs.length]!;
  return `${pick(NAMES, i)} ${pick(VERBS, i * 7 + 3)[0]} ${pick(THINGS, i * 13 + 5)} ${pick(PLACES, i * 3 + 1)} ${pick(WHEN, i * 11 + 2)} (note ${i})`;
}

/** Queries for the repeated-query mix, over the same vocabulary. */
export const QUERIES = [
  "What is the name of Alice's dog?",
  'Who visited the lighthouse?',
  'What did Bob repair last week?',
  'Where did Carmen plant the lemon tree?',
  'Who has a vintage camera?',
  'What happened in Kyoto?',
  'Which instrument did Erin sell?',
  'What did Grace cook at the market?',
];

/** A small seeded generator (mulberry32): the same seed gives the same queries on every run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Question shapes over a name (n, m), a verb (past p, base b), an object (t), a place (w) and a
 * time (d): the words of the memories, so that every query finds some, in the forms people ask.
 */
const SHAPES: ((x: Record<'n' | 'm' | 'p' | 'b' | 't' | 'w' | 'd', string>) => string)[] = [
  (x) => `When did ${x.n} ${x.b} ${x.t} ${x.w}?`,
  (x) => `Did ${x.n} ${x.b} ${x.t} ${x.w} ${x.d}?`,
  (x) => `Who ${x.p} ${x.t} ${x.w} ${x.d}, ${x.n} or ${x.m}?`,
  (x) => `What did ${x.n} ${x.b} ${x.w} ${x.d} besides ${x.t}?`,
  (x) => `Where was ${x.t} that ${x.n} ${x.p} ${x.d}?`,
  (x) => `Remind me whether ${x.n} and ${x.m} ${x.p} ${x.t} ${x.w}`,
  (x) => `Tell me what happened ${x.w} ${x.d} when ${x.n} ${x.p} ${x.t}`,
  (x) => `How often has ${x.n} ${x.p} ${x.t} ${x.w} since ${x.m} did?`,
];

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

/** Every query each generator made, so that no two in one bench process are the same. */
const made = new Set<string>();

/**
 * Varied recall queries, every one different from all others of this process: 10 to 14 words
 * drawn at random (seeded) from the names, verbs, objects, places and times the bank's memories
 * are made of, in one of the SHAPES. There are over a million such queries; a bench run asks a
 * few tens of thousands.
 */
export function variedQueries(seed = 1): () => string {
  const random = seededRandom(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]!;
  return () => {
    for (;;) {
      const [p, b] = pick(VERBS);
      const n = pick(NAMES);
      let m = pick(NAMES);
      while (m === n) m = pick(NAMES);
      const q = pick(SHAPES)({ n, m, p, b, t: pick(THINGS), w: pick(PLACES), d: pick(WHEN) });
      const count = words(q);
      if (count >= 10 && count <= 14 && !made.has(q)) {
        made.add(q);
        return q;
      }
    }
  };
}

/** The Retain items of the seeded bank's memories `from` to `from + n - 1`: an hour apart from 2023. */
export const seedItems = (from: number, n: number) =>
  Array.from({ length: n }, (_, k) => ({
    content: sentence(from + k),
    fact_type: 'world',
    timestamp: new Date(Date.UTC(2023, 0, 1) + (from + k) * 3_600_000).toISOString(),
  }));

/** Retains `count` memories into the bank in batches; returns the seconds it took. */
export async function seedBank(url: string, count: number, bank = BANK): Promise<number> {
  const started = performance.now();
  const BATCH = 500;
  for (let i = 0; i < count; i += BATCH) {
    const items = seedItems(i, Math.min(BATCH, count - i));
    const r = await call(url, 'POST', bankPath(bank, '/memories'), { body: { items }, timeoutMs: 600_000 });
    if (r.status !== 200) throw new Error(`seeding failed: ${r.status} ${JSON.stringify(r.body)}`);
  }
  return (performance.now() - started) / 1000;
}

/**
 * Waits until the bank has no pending or running operation (the consolidation Retain queued),
 * so the load runs measure recall in a steady state; returns the seconds waited (NaN: gave up).
 */
export async function drainOperations(url: string, bank = BANK, timeoutMs = 300_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    const busy = await Promise.all(
      ['pending', 'processing'].map(async (status) => {
        const r = await call(url, 'GET', bankPath(bank, `/operations?status=${status}&limit=1`));
        return (r.body as { items?: unknown[] }).items?.length ?? 0;
      }),
    );
    if (busy.every((n) => n === 0)) return (performance.now() - started) / 1000;
    if (performance.now() - started > timeoutMs) return Number.NaN;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

export type Mix = 'recall' | 'recall-unique' | 'recall+retain' | 'retain';

/** `max_tokens` of every Recall of the mixes (the every-query-new figure uses 2000). */
export const RECALL_MAX_TOKENS = 2000;

/**
 * The request list for a mix (autocannon walks it in order on each connection): `recall` only
 * (the eight QUERIES in turn: after the first round, answers come from the Recall cache until a
 * write or the time to live), `recall-unique` (every query different: 10 to 14 words drawn from
 * the bank's names, verbs, objects, places and times by `variedQueries`, so every Recall is
 * computed and no lower layer sees a repeat either), `recall+retain` nine recalls to one
 * single-item Retain (each Retain invalidates the bank's cached answers), or `retain` only.
 * Retains carry unique content so nothing is deduplicated. Recalls ask for budget `mid` and
 * `max_tokens` RECALL_MAX_TOKENS. `seed` seeds the varied queries (every list of one process
 * differs from the others anyway).
 */
export function mixRequests(mix: Mix, bank = BANK, seed = 1): Request[] {
  const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
  let n = 0;
  const body = (query: string) => JSON.stringify({ query, budget: 'mid', max_tokens: RECALL_MAX_TOKENS });
  const recall: Request = {
    method: 'POST',
    path: bankPath(bank, '/memories/recall'),
    headers,
    setupRequest: (req) => ({ ...req, body: body(QUERIES[n++ % QUERIES.length]!) }),
  };
  const next = mix === 'recall-unique' ? variedQueries(seed) : null;
  const unique: Request = { ...recall, setupRequest: (req) => ({ ...req, body: body(next!()) }) };
  const retain: Request = {
    method: 'POST',
    path: bankPath(bank, '/memories'),
    headers,
    setupRequest: (req) => ({
      ...req,
      body: JSON.stringify({
        items: [{ content: `${sentence(n)} ${randomBytes(4).toString('hex')}`, fact_type: 'world' }],
      }),
    }),
  };
  if (mix === 'recall') return [recall];
  if (mix === 'recall-unique') return [unique];
  if (mix === 'retain') return [retain];
  return [...Array.from({ length: 9 }, () => recall), retain];
}

/** Resident memory of a process in MB (Linux /proc), or NaN where unavailable. */
export function rssMB(pid: number | undefined): number {
  if (!pid) return Number.NaN;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
    return kb / 1024;
  } catch {
    return Number.NaN;
  }
}

/** Samples a process's RSS every `everyMs` until stopped. */
export function sampleRss(pid: number | undefined, everyMs: number): { stop(): number[] } {
  const samples: number[] = [rssMB(pid)];
  const t = setInterval(() => samples.push(rssMB(pid)), everyMs);
  return {
    stop() {
      clearInterval(t);
      samples.push(rssMB(pid));
      return samples;
    },
  };
}

/**
 * CPU seconds (user + system) a process has used so far (Linux /proc), or NaN. `mainThread`:
 * only its main thread's (the one serving HTTP; the embedded engine's thread apart).
 */
export function cpuSeconds(pid: number | undefined, mainThread = false): number {
  if (!pid) return Number.NaN;
  try {
    // The fields after the command name (which may hold spaces) start at the state, field 3.
    const stat = readFileSync(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/** Linux's USER_HZ: /proc counts CPU time in hundredths of a second. */
const CLOCK_TICKS = 100;

/**
 * CPU seconds the PostgreSQL backends of a database have used so far (the server's pool): what
 * the database spent on that server's statements. Needs the PostgreSQL server on this machine.
 */
export async function databaseCpuSeconds(database: string): Promise<Map<number, number>> {
  const c = new pg.Client({ connectionString: adminDatabaseUrl() });
  await c.connect();
  try {
    const r = await c.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [
      database,
    ]);
    return new Map(r.rows.map((row) => [row.pid, cpuSeconds(row.pid)]));
  } finally {
    await c.end();
  }
}

/** CPU seconds between two readings of `databaseCpuSeconds` (a backend new since counts from 0). */
export function cpuSpent(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, t] of after) {
    const b = before.get(pid);
    if (!Number.isNaN(t)) sum += t - (b === undefined || Number.isNaN(b) ? 0 : b);
  }
  return sum;
}
