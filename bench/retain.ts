/**
 * Retain throughput: `chunks` mode in batches of 100 through the HTTP stack (in-process), on
 * PGlite and (with MNEMO_BENCH_DATABASE_URL or MNEMO_TEST_DATABASE_URL) PostgreSQL; an async
 * import of 10,000 items end to end; the local extractor; peak memory.
 * Run: `npx tsx bench/retain.ts` (or through `npm run bench`).
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApp } from '../src/api/app.js';
import { createLogger } from '../src/api/logger.js';
import { compose, type Runtime } from '../src/runtime/compose.js';
import { loadConfig } from '../src/config/load.js';
import { effectiveConfig } from '../src/core/bank-config.js';
import { localFacts } from '../src/core/retain/extract.js';
import { createEmbedder } from '../src/embed/index.js';
import { openStore } from '../src/store/open.js';
import { createTestDatabase } from '../test/helpers/engines.js';

const SPEAKERS = ['Caroline', 'Melanie', 'Jon', 'Gina'];
const TOPICS = [
  'went to a support group meeting downtown',
  'painted a sunrise over the lake',
  'is planning a camping trip with the kids',
  'adopted a puppy named Pepper from the shelter',
  'started a new job at the bakery on Main Street',
  'read a book about mindfulness and loved it',
  'ran a half marathon in under two hours',
  'is learning to play the violin',
];

/** A realistic chat line, deterministic in `i`. */
export function chatLine(i: number): string {
  const who = SPEAKERS[i % SPEAKERS.length]!;
  const what = TOPICS[(i * 7) % TOPICS.length]!;
  return `${who}: Yesterday I ${what.replace(/^is /, 'was ')}, and it was number ${i} of my week.`;
}

async function timeRetain(runtime: Runtime, n: number): Promise<{ perSecond: number; peakRss: number }> {
  const app = createApp(runtime, createLogger('silent'));
  let peak = process.memoryUsage().rss;
  const bank = `bench-${Date.now()}`;
  const started = performance.now();
  for (let b = 0; b < n / 100; b++) {
    const items = Array.from({ length: 100 }, (_, k) => ({
      content: chatLine(b * 100 + k),
      timestamp: new Date(Date.UTC(2024, 0, 1) + (b * 100 + k) * 60_000).toISOString(),
    }));
    const res = await app.request(`/v1/default/banks/${bank}/memories`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items }),
    });
    if (res.status !== 200) throw new Error(`retain failed: ${res.status} ${await res.text()}`);
    peak = Math.max(peak, process.memoryUsage().rss);
  }
  return { perSecond: n / ((performance.now() - started) / 1000), peakRss: peak };
}

async function timeAsyncImport(runtime: Runtime, n: number): Promise<{ seconds: number; peakRss: number }> {
  const { services } = runtime;
  const log = createLogger('silent');
  const worker = runtime.startWorker(log);
  const app = createApp(runtime, log);
  const bank = `bench-async-${Date.now()}`;
  let peak = process.memoryUsage().rss;
  const started = performance.now();
  const ops: string[] = [];
  for (let b = 0; b < n / 100; b++) {
    const items = Array.from({ length: 100 }, (_, k) => ({ content: chatLine(b * 100 + k) }));
    const res = await app.request(`/v1/default/banks/${bank}/memories`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items, async: true }),
    });
    ops.push(((await res.json()) as { operation_id: string }).operation_id);
  }
  for (;;) {
    const pending = await services.store.countPendingOperations();
    peak = Math.max(peak, process.memoryUsage().rss);
    if (pending === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const seconds = (performance.now() - started) / 1000;
  await worker.stop();
  const bankRow = await services.store.getBank('default', bank);
  if (bankRow?.memory_count !== n) throw new Error(`async import stored ${bankRow?.memory_count} of ${n}`);
  return { seconds, peakRss: peak };
}

function localExtractorRate(): number {
  const cfg = effectiveConfig({ retain_extraction_mode: 'concise' });
  const n = 2000;
  const started = performance.now();
  for (let i = 0; i < n; i++)
    localFacts({ content: chatLine(i), mentioned: new Date() }, cfg.retain_extraction_mode as 'concise');
  return n / ((performance.now() - started) / 1000);
}

const mb = (b: number) => Math.round(b / 1024 / 1024);

export async function benchRetain(): Promise<Record<string, string | number>[]> {
  const rows: Record<string, string | number>[] = [];
  const embedder = createEmbedder({ cacheDir: loadConfig({}, process.env).cacheDir });
  await embedder.embed(['warm up']);
  const config = loadConfig({ logLevel: 'silent' }, {});
  const engines: { name: string; open: () => Promise<{ runtime: Runtime; close: () => Promise<void> }> }[] = [
    {
      name: 'pglite',
      open: async () => {
        const store = await openStore({});
        return {
          runtime: await compose(config, { store, embedder }),
          close: () => store.close(),
        };
      },
    },
  ];
  if (process.env.MNEMO_BENCH_DATABASE_URL || process.env.MNEMO_TEST_DATABASE_URL) {
    engines.push({
      name: 'postgres',
      open: async () => {
        const saved = process.env.MNEMO_TEST_DATABASE_URL;
        process.env.MNEMO_TEST_DATABASE_URL = process.env.MNEMO_BENCH_DATABASE_URL ?? saved;
        const db = await createTestDatabase();
        process.env.MNEMO_TEST_DATABASE_URL = saved;
        const store = await openStore({ databaseUrl: db.url, poolSize: 10 });
        return {
          runtime: await compose(config, { store, embedder }),
          close: async () => {
            await store.close();
            await db.drop();
          },
        };
      },
    });
  }
  for (const engine of engines) {
    const { runtime, close } = await engine.open();
    try {
      const sync = await timeRetain(runtime, 5000);
      rows.push({
        bench: 'retain chunks, batches of 100 (5,000 items)',
        engine: engine.name,
        result: `${Math.round(sync.perSecond)} memories/s`,
        'peak RSS MB': mb(sync.peakRss),
      });
      const async = await timeAsyncImport(runtime, 10_000);
      rows.push({
        bench: 'async import, 10,000 items end to end',
        engine: engine.name,
        result: `${async.seconds.toFixed(1)} s (${Math.round(10_000 / async.seconds)}/s)`,
        'peak RSS MB': mb(async.peakRss),
      });
    } finally {
      await close();
    }
  }
  rows.push({
    bench: 'local extractor (concise), chat lines',
    engine: '-',
    result: `${Math.round(localExtractorRate())} items/s`,
    'peak RSS MB': mb(process.memoryUsage().rss),
  });
  return rows;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  console.table(await benchRetain());
}
