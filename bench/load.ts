/**
 * Load: autocannon against a `mnemo serve` child process on loopback, over a bank of 10k
 * memories, with recall-only (repeated and all-distinct queries), recall+retain (9:1) and retain-only mixes at concurrency 16, 64
 * and 256 for a bounded time each; prints throughput, p50/p99 latency, errors (connection
 * errors, timeouts and non-2xx answers), CPU per request of the server process, (PostgreSQL)
 * of its database backends and of the load generator itself (autocannon, in this process), and the server's resident memory before and after.
 * Embedded engine always; PostgreSQL too with MNEMO_BENCH_DATABASE_URL or MNEMO_TEST_DATABASE_URL.
 *
 * Run: `npm run bench -- load [--engines pglite,postgres] [--memories 10000] [--seconds 15]
 *   [--concurrency 16,64,256] [--mixes recall,recall-unique,recall+retain,retain] [--no-worker]
 *   [--no-vacuum] [--cpu-prof DIR]` (or `npx tsx bench/load.ts` with the same flags). `--no-worker`: no
 * consolidation behind the seeding, so recall is measured alone; `--no-vacuum`: PostgreSQL's
 * database is not vacuumed after the seeding (by default it is, as autovacuum would after a load); `--cpu-prof DIR`: the server
 * writes a V8 CPU profile of its whole run into DIR when it stops.
 * Target (the issue): recall at concurrency 64 on 10k memories >= 500 rps, p99 < 250 ms, no errors.
 */
import { loadavg } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { unhandledErrors } from '../test/stress/helpers.js';
import {
  adminDatabaseUrl,
  cpuSeconds,
  cpuSpent,
  databaseCpuSeconds,
  drainOperations,
  type EngineName,
  type Mix,
  mixRequests,
  rssMB,
  sampleRss,
  seedBank,
  startBenchServer,
} from './load-driver.js';

const PROFILER = fileURLToPath(new URL('./load-profiler.ts', import.meta.url));

export interface LoadOptions {
  engines?: EngineName[];
  memories?: number;
  seconds?: number;
  concurrency?: number[];
  mixes?: Mix[];
  /** Run the server's in-process worker (consolidation behind the seeding Retains); default true. */
  worker?: boolean;
  /** PostgreSQL: vacuum the database after seeding, as autovacuum would after a load; default true. */
  vacuum?: boolean;
  /** A directory the server writes a V8 CPU profile into when it stops (`node --cpu-prof`). */
  cpuProf?: string;
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
  /** CPU ms per request of the server process (Node: HTTP, Recall's own work, the embedded engine). */
  nodeCpuMs: number;
  /** CPU ms per request of the server's PostgreSQL backends (NaN on the embedded engine). */
  dbCpuMs: number;
  /**
   * CPU ms per request of the load generator (autocannon, in this process): on one machine it
   * takes its share of the cores from the server's.
   */
  clientCpuMs: number;
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
    const env: Record<string, string> = opts.cpuProf
      ? {
          NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import tsx --import ${PROFILER}`.trim(),
          MNEMO_BENCH_CPU_PROF: opts.cpuProf,
        }
      : {};
    const bench = await startBenchServer(engine, { worker: opts.worker ?? true, env });
    try {
      const pid = bench.server.child.pid;
      const seeded = await seedBank(bench.url, memories);
      const drained = opts.worker === false ? 0 : await drainOperations(bench.url);
      const background = Number.isNaN(drained)
        ? 'background operations still running after 300 s'
        : `background operations done ${drained.toFixed(0)} s later`;
      const vacuum = opts.vacuum !== false ? bench.vacuum : undefined;
      if (vacuum) await vacuum();
      log(
        `${engine}: seeded ${memories} memories in ${seeded.toFixed(1)} s, ${background}${vacuum ? '; vacuumed' : ''}; server RSS ${rssMB(pid).toFixed(0)} MB`,
      );
      // Warm-up: first recalls compile queries and fill caches.
      await autocannon({ url: bench.url, connections: 4, duration: 3, requests: mixRequests('recall') });
      // New queries meet memories the process has not analysed yet (the reranker's per-text
      // features are memoized): a first pass over the bank, so every cell measures the steady state.
      if (mixes.includes('recall-unique'))
        await autocannon({
          url: bench.url,
          connections: 8,
          duration: Math.min(seconds, 10),
          requests: mixRequests('recall-unique', undefined, 0),
        });
      let cell = 0;
      for (const mix of mixes) {
        for (const concurrency of levels) {
          const rss = sampleRss(pid, 500);
          const db = bench.database;
          const [nodeBefore, dbBefore] = [cpuSeconds(pid), db ? await databaseCpuSeconds(db) : null];
          const mainBefore = cpuSeconds(pid, true);
          const clientBefore = process.cpuUsage();
          const r = await autocannon({
            url: bench.url,
            connections: concurrency,
            duration: seconds,
            timeout: 30,
            requests: mixRequests(mix, undefined, ++cell),
          });
          const client = process.cpuUsage(clientBefore);
          const nodeCpu = cpuSeconds(pid) - nodeBefore;
          const mainCpu = cpuSeconds(pid, true) - mainBefore;
          const dbCpu = db && dbBefore ? cpuSpent(dbBefore, await databaseCpuSeconds(db)) : Number.NaN;
          const perRequest = (cpu: number) =>
            r.requests.total > 0 ? (cpu * 1000) / r.requests.total : Number.NaN;
          const samples = rss.stop().filter((x) => !Number.isNaN(x));
          const row: LoadRow = {
            engine,
            mix,
            concurrency,
            rps: r.requests.total / r.duration,
            p50: r.latency.p50,
            p99: r.latency.p99,
            errors: r.errors + r.timeouts + r.non2xx,
            nodeCpuMs: perRequest(nodeCpu),
            dbCpuMs: perRequest(dbCpu),
            clientCpuMs: perRequest((client.user + client.system) / 1e6),
            rssStartMB: samples[0] ?? Number.NaN,
            rssPeakMB: Math.max(...samples),
            rssEndMB: samples.at(-1) ?? Number.NaN,
          };
          rows.push(row);
          const codes = Object.entries(r.statusCodeStats)
            .map(([code, s]) => `${code}:${s.count}`)
            .join(' ');
          log(
            `  ${mix} c=${concurrency}: ${row.rps.toFixed(0)} rps, p50 ${row.p50} ms, p99 ${row.p99} ms, errors ${row.errors} [${codes}], CPU per request ${row.nodeCpuMs.toFixed(2)} ms Node (main thread ${perRequest(mainCpu).toFixed(2)}) + ${row.dbCpuMs.toFixed(2)} ms database + ${row.clientCpuMs.toFixed(2)} ms client, load ${loadavg()[0]!.toFixed(1)}`,
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
    '| engine | mix | concurrency | req/s | p50 ms | p99 ms | errors | CPU ms/request: Node | database | client | server RSS MB (start / peak / end) |';
  const sep = '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|';
  const lines = rows.map(
    (r) =>
      `| ${r.engine} | ${r.mix} | ${r.concurrency} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.nodeCpuMs.toFixed(2)} | ${Number.isNaN(r.dbCpuMs) ? '—' : r.dbCpuMs.toFixed(2)} | ${r.clientCpuMs.toFixed(2)} | ${r.rssStartMB.toFixed(0)} / ${r.rssPeakMB.toFixed(0)} / ${r.rssEndMB.toFixed(0)} |`,
  );
  return [head, sep, ...lines].join('\n');
}

/** The options of `npm run bench -- load` (and `npx tsx bench/load.ts`) from its flags. */
export function loadArgs(argv: string[]): LoadOptions {
  const arg = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const list = (v: string | undefined) => v?.split(',').map((x) => x.trim());
  return {
    engines: list(arg('engines')) as EngineName[] | undefined,
    memories: arg('memories') ? Number(arg('memories')) : undefined,
    seconds: arg('seconds') ? Number(arg('seconds')) : undefined,
    concurrency: list(arg('concurrency'))?.map(Number),
    mixes: list(arg('mixes')) as Mix[] | undefined,
    worker: !argv.includes('--no-worker'),
    vacuum: !argv.includes('--no-vacuum'),
    cpuProf: arg('cpu-prof'),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const rows = await benchLoad(loadArgs(process.argv.slice(2)));
  process.stdout.write(
    `\n${formatLoad(rows)}\n\nload average during the run: ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')} (2 cores)\n`,
  );
}
