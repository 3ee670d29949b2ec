/**
 * Load: autocannon against a `mnemo serve` child process on loopback, over a bank of 10k
 * memories, with recall-only (repeated and all-distinct queries), recall+retain (9:1) and retain-only mixes at concurrency 16, 64
 * and 256 for a bounded time each; prints throughput, p50/p99 latency, errors (connection
 * errors, timeouts and non-2xx answers) and the server's resident memory before and after.
 * Embedded engine always; PostgreSQL too with MNEMO_BENCH_DATABASE_URL or MNEMO_TEST_DATABASE_URL.
 *
 * Run: `npx tsx bench/load.ts [--engines pglite,postgres] [--memories 10000] [--seconds 15]
 *   [--concurrency 16,64,256] [--mixes recall,recall-unique,recall+retain,retain] [--no-worker]`
 * (`--no-worker`: no consolidation behind the seeding, so recall is measured alone)
 * Target (the issue): recall at concurrency 64 on 10k memories >= 500 rps, p99 < 250 ms, no errors.
 */
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { unhandledErrors } from '../test/stress/helpers.js';
import {
  adminDatabaseUrl,
  drainOperations,
  type EngineName,
  type Mix,
  mixRequests,
  rssMB,
  sampleRss,
  seedBank,
  startBenchServer,
} from './load-driver.js';

export interface LoadOptions {
  engines?: EngineName[];
  memories?: number;
  seconds?: number;
  concurrency?: number[];
  mixes?: Mix[];
  /** Run the server's in-process worker (consolidation behind the seeding Retains); default true. */
  worker?: boolean;
  log?: (line: string) => void;
}

export interface LoadRow {
  engine: EngineName;
  mix: Mix;
  concurrency: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  rssStartMB: number;
  rssPeakMB: number;
  rssEndMB: number;
}

/** Runs the load matrix and returns one row per engine, mix and concurrency. */
export async function benchLoad(opts: LoadOptions = {}): Promise<LoadRow[]> {
  const log = opts.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const engines = opts.engines ?? (adminDatabaseUrl() ? ['pglite', 'postgres'] : ['pglite']);
  const memories = opts.memories ?? 10_000;
  const seconds = opts.seconds ?? 15;
  const levels = opts.concurrency ?? [16, 64, 256];
  const mixes = opts.mixes ?? ['recall', 'recall-unique', 'recall+retain', 'retain'];
  const rows: LoadRow[] = [];
  for (const engine of engines) {
    const bench = await startBenchServer(engine, { worker: opts.worker ?? true });
    try {
      const pid = bench.server.child.pid;
      const seeded = await seedBank(bench.url, memories);
      const drained = opts.worker === false ? 0 : await drainOperations(bench.url);
      const background = Number.isNaN(drained)
        ? 'background operations still running after 300 s'
        : `background operations done ${drained.toFixed(0)} s later`;
      log(
        `${engine}: seeded ${memories} memories in ${seeded.toFixed(1)} s, ${background}; server RSS ${rssMB(pid).toFixed(0)} MB`,
      );
      // Warm-up: first recalls compile queries and fill caches.
      await autocannon({ url: bench.url, connections: 4, duration: 3, requests: mixRequests('recall') });
      for (const mix of mixes) {
        for (const concurrency of levels) {
          const rss = sampleRss(pid, 500);
          const r = await autocannon({
            url: bench.url,
            connections: concurrency,
            duration: seconds,
            timeout: 30,
            requests: mixRequests(mix),
          });
          const samples = rss.stop().filter((x) => !Number.isNaN(x));
          const row: LoadRow = {
            engine,
            mix,
            concurrency,
            rps: r.requests.total / r.duration,
            p50: r.latency.p50,
            p99: r.latency.p99,
            errors: r.errors + r.timeouts + r.non2xx,
            rssStartMB: samples[0] ?? Number.NaN,
            rssPeakMB: Math.max(...samples),
            rssEndMB: samples.at(-1) ?? Number.NaN,
          };
          rows.push(row);
          const codes = Object.entries(r.statusCodeStats)
            .map(([code, s]) => `${code}:${s.count}`)
            .join(' ');
          log(
            `  ${mix} c=${concurrency}: ${row.rps.toFixed(0)} rps, p50 ${row.p50} ms, p99 ${row.p99} ms, errors ${row.errors} [${codes}]`,
          );
          const cause = unhandledErrors(bench.server)[0];
          if (cause) log(`  first unhandled error of the server: ${cause.slice(0, 500)}`);
        }
      }
    } finally {
      await bench.close();
    }
  }
  return rows;
}

/** The result table (markdown). */
export function formatLoad(rows: LoadRow[]): string {
  const head =
    '| engine | mix | concurrency | req/s | p50 ms | p99 ms | errors | server RSS MB (start / peak / end) |';
  const sep = '|---|---|---:|---:|---:|---:|---:|---|';
  const lines = rows.map(
    (r) =>
      `| ${r.engine} | ${r.mix} | ${r.concurrency} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.rssStartMB.toFixed(0)} / ${r.rssPeakMB.toFixed(0)} / ${r.rssEndMB.toFixed(0)} |`,
  );
  return [head, sep, ...lines].join('\n');
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const list = (v: string | undefined) => v?.split(',').map((x) => x.trim());
  const rows = await benchLoad({
    engines: list(arg('engines')) as EngineName[] | undefined,
    memories: arg('memories') ? Number(arg('memories')) : undefined,
    seconds: arg('seconds') ? Number(arg('seconds')) : undefined,
    concurrency: list(arg('concurrency'))?.map(Number),
    mixes: list(arg('mixes')) as Mix[] | undefined,
    worker: !process.argv.includes('--no-worker'),
  });
  process.stdout.write(
    `\n${formatLoad(rows)}\n\nload average during the run: ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')} (2 cores)\n`,
  );
}
