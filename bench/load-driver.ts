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
  close(): Promise<void>;
}

/** Starts `mnemo serve` (with its worker unless `worker: false`) on a fresh database of the engine. */
export async function startBenchServer(engine: EngineName, { worker = true } = {}): Promise<BenchServer> {
  if (engine === 'pglite') {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-load-'));
    const server = await startServe({ dataDir: dir, worker });
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
  const run = async (sql: string) => {
    const c = new pg.Client({ connectionString: admin });
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
  const server = await startServe({ databaseUrl: url.toString(), worker });
  return {
    server,
    url: server.url,
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
const VERBS = [
  'adopted',
  'visited',
  'cooked',
  'painted',
  'repaired',
  'sold',
  'borrowed',
  'photographed',
  'found',
  'planted',
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
  return `${pick(NAMES, i)} ${pick(VERBS, i * 7 + 3)} ${pick(THINGS, i * 13 + 5)} ${pick(PLACES, i * 3 + 1)} ${pick(WHEN, i * 11 + 2)} (note ${i})`;
}

/** Queries for recall, over the same vocabulary. */
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

/** Retains `count` memories into the bank in batches; returns the seconds it took. */
export async function seedBank(url: string, count: number, bank = BANK): Promise<number> {
  const started = performance.now();
  const BATCH = 500;
  for (let i = 0; i < count; i += BATCH) {
    const items = Array.from({ length: Math.min(BATCH, count - i) }, (_, k) => ({
      content: sentence(i + k),
      fact_type: 'world',
      timestamp: new Date(Date.UTC(2023, 0, 1) + (i + k) * 3_600_000).toISOString(),
    }));
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

/**
 * The request list for a mix (autocannon walks it in order on each connection): `recall` only
 * (the eight QUERIES in turn: after the first round, answers come from the Recall cache until a
 * write or the time to live), `recall-unique` (every query different, so every Recall is computed:
 * the cache never helps), `recall+retain` nine recalls to one single-item Retain (each Retain
 * invalidates the bank's cached answers), or `retain` only. Retains carry unique content so
 * nothing is deduplicated.
 */
export function mixRequests(mix: Mix, bank = BANK): Request[] {
  const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
  let n = 0;
  const recall: Request = {
    method: 'POST',
    path: bankPath(bank, '/memories/recall'),
    headers,
    setupRequest: (req) => ({
      ...req,
      body: JSON.stringify({ query: QUERIES[n++ % QUERIES.length], budget: 'mid' }),
    }),
  };
  const unique: Request = {
    ...recall,
    setupRequest: (req) => {
      const i = n++;
      return {
        ...req,
        body: JSON.stringify({ query: `${QUERIES[i % QUERIES.length]} (${i})`, budget: 'mid' }),
      };
    },
  };
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
