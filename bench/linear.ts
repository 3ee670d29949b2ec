/**
 * Heavy Retains against the service's linear-time paths (issue 18): one Retain of 200 items ×
 * 100 new entities each (entity resolution), and 1,000 items of 10 KB without a space (token
 * counting, chunking, text analysis), on PGlite and (with MNEMO_BENCH_DATABASE_URL or
 * MNEMO_TEST_DATABASE_URL) PostgreSQL. While each runs, another tenant's `/health` is probed
 * every 20 ms in the same process; its worst latency is how long the event loop was held.
 * CPU seconds of this process are printed beside wall time: on a shared machine wall time
 * also measures the neighbours (PostgreSQL's own work is in its server, not counted).
 * Run: `npx tsx bench/linear.ts` (or `npm run bench -- linear`). `--quick` halves the sizes.
 */
import { pathToFileURL } from 'node:url';
import { createApp } from '../src/api/app.js';
import { compose, type Runtime } from '../src/runtime/compose.js';
import { createLogger } from '../src/api/logger.js';
import { loadConfig } from '../src/config/load.js';
import { openStore } from '../src/store/open.js';
import { createTestDatabase } from '../test/helpers/engines.js';

type Rows = Record<string, string | number>[];
const ADMIN = 'bench-linear-admin';

/** A distinct made-up two-word name per (item, slot): none of them resolves to another. */
const NAME_PARTS = 'ka lo mi nu pe ra si to vu wa xe yo za be co di fu ga'.split(' ');
function name(n: number): string {
  const word = (x: number, len: number) => {
    let s = '';
    for (let i = 0; i < len; i++, x = Math.floor(x / NAME_PARTS.length))
      s += NAME_PARTS[x % NAME_PARTS.length];
    return s.charAt(0).toUpperCase() + s.slice(1);
  };
  return `${word(n, 4)} ${word(n * 7919 + 13, 4)}`;
}

/** A run of letters and digits without a space, deterministic in `i`. */
function noSpace(i: number, chars: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  let s = '';
  let x = i * 2654435761;
  for (let k = 0; k < chars; k++) {
    x = (x * 1103515245 + 12345) >>> 0;
    s += alphabet[x % (k % 50 < 40 ? 26 : alphabet.length)];
  }
  return s;
}

async function services(url?: string): Promise<{ runtime: Runtime; close(): Promise<void> }> {
  const db = url ? await createTestDatabase() : null;
  const store = await openStore(db ? { databaseUrl: db.url, poolSize: 4 } : {});
  const runtime = await compose(loadConfig({ adminToken: ADMIN, logLevel: 'silent' }, {}), { store });
  return {
    runtime,
    async close() {
      await store.close();
      await db?.drop();
    },
  };
}

/** Runs `work` while probing `/health` every 20 ms; returns its time and the worst probe latency. */
async function probed(
  app: ReturnType<typeof createApp>,
  work: () => Promise<void>,
): Promise<{ seconds: number; cpuSeconds: number; worstHealthMs: number }> {
  let worst = 0;
  let stop = false;
  const probe = (async () => {
    while (!stop) {
      const sent = performance.now();
      const res = await app.request('/health');
      await res.arrayBuffer();
      worst = Math.max(worst, performance.now() - sent);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  // Timer lateness counts too: a blocked event loop delays the probe's start.
  let last = performance.now();
  const lag = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 20);
    last = now;
  }, 20);
  const started = performance.now();
  const cpu = process.cpuUsage();
  await work();
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const cpuSeconds = (used.user + used.system) / 1e6;
  stop = true;
  clearInterval(lag);
  await probe;
  return { seconds, cpuSeconds, worstHealthMs: worst };
}

async function retainOnce(app: ReturnType<typeof createApp>, bank: string, items: unknown[]): Promise<void> {
  const res = await app.request(`/v1/default/banks/${bank}/memories`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
    body: JSON.stringify({ items }),
  });
  if (res.status !== 200) throw new Error(`retain failed: ${res.status} ${(await res.text()).slice(0, 300)}`);
}

/** Rows of `{ benchmark, engine, case, seconds, worst /health ms }`. */
export async function benchLinear(argv: string[] = []): Promise<Rows> {
  const quick = argv.includes('--quick');
  const url = process.env.MNEMO_BENCH_DATABASE_URL ?? process.env.MNEMO_TEST_DATABASE_URL;
  const engines: [string, string | undefined][] = [
    ['pglite', undefined],
    ...(url ? [['postgres', url] as [string, string]] : []),
  ];
  const only = argv.find((a) => a.startsWith('--engine='))?.slice('--engine='.length);
  const rows: Rows = [];
  for (const [engine, dbUrl] of engines) {
    if (only && only !== engine) continue;
    const { runtime, close } = await services(dbUrl);
    try {
      const app = createApp(runtime, createLogger('silent'));
      // A bank that already knows entities, and a warm embedder and tagger.
      await retainOnce(app, 'warm', [{ content: 'Caroline met Melanie in Boston.' }]);
      const nItems = quick ? 100 : 200;
      const entityItems = Array.from({ length: nItems }, (_, i) => ({
        content: `Meeting ${i} of the project group.`,
        entities: Array.from({ length: 100 }, (_, k) => ({ text: name(i * 100 + k), type: 'PERSON' })),
      }));
      const a = await probed(app, () => retainOnce(app, 'entities', entityItems));
      rows.push({
        benchmark: 'linear',
        engine,
        case: `1 Retain: ${nItems} items × 100 new entities`,
        seconds: +a.seconds.toFixed(2),
        'cpu s (this process)': +a.cpuSeconds.toFixed(2),
        'worst /health ms': Math.round(a.worstHealthMs),
      });
      const nText = quick ? 500 : 1000;
      const textItems = Array.from({ length: nText }, (_, i) => ({ content: noSpace(i, 10_000) }));
      const b = await probed(app, async () => {
        // Two requests: 1,000 × 10 KB is just under the body limit, JSON and all, only in halves.
        await retainOnce(app, 'nospace', textItems.slice(0, nText / 2));
        await retainOnce(app, 'nospace', textItems.slice(nText / 2));
      });
      rows.push({
        benchmark: 'linear',
        engine,
        case: `Retain: ${nText} items × 10 KB without a space (2 requests)`,
        seconds: +b.seconds.toFixed(2),
        'cpu s (this process)': +b.cpuSeconds.toFixed(2),
        'worst /health ms': Math.round(b.worstHealthMs),
      });
    } finally {
      await close();
    }
  }
  return rows;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.table(await benchLinear(process.argv.slice(2)));
}
