/**
 * Soak: a mixed load (recall, Retain, listing, bank profile) against a `mnemo serve` child
 * process for 10 minutes, printing the server's memory every 30 s: resident (RSS), its JavaScript
 * heap (size, and live data after the latest full garbage collection), and on the embedded engine
 * the part of its page cache holding data. Memory should be flat: after the first minutes
 * (caches filling, the JIT warming) it stays within a band instead of climbing. The live heap is
 * what a leak in mnemo grows; the RSS also carries garbage V8 has not collected yet (it lets the
 * heap grow far under load when the machine has memory to spare) and the embedded page cache,
 * resident from a page's first use and bounded by its size. The verdicts compare the mean of the
 * first and last thirds of the samples after warm-up and fit a slope.
 *
 * Run: `npx tsx bench/soak.ts [--engine pglite|postgres] [--minutes 10] [--connections 16]`
 * (postgres needs MNEMO_BENCH_DATABASE_URL or MNEMO_TEST_DATABASE_URL).
 */
import { loadavg } from 'node:os';
import autocannon, { type Request } from 'autocannon';
import { metricSample } from '../test/helpers/prometheus.js';
import { ADMIN, bankPath } from '../test/stress/helpers.js';
import { BANK, type EngineName, mixRequests, rssMB, seedBank, startBenchServer } from './load-driver.js';

const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const engine = (arg('engine') ?? 'pglite') as EngineName;
const minutes = Number(arg('minutes') ?? 10);
const connections = Number(arg('connections') ?? 16);
const EVERY_S = 30;
/** Samples before this are warm-up and not judged. */
const WARMUP_S = 120;

const out = (line: string) => process.stdout.write(`${line}\n`);

const headers = { authorization: `Bearer ${ADMIN}` };
/** Eight recalls, a Retain, a listing and a profile read, in that order on each connection. */
const requests: Request[] = [
  ...mixRequests('recall+retain').slice(0, 8),
  mixRequests('retain')[0]!,
  { method: 'GET', path: bankPath(BANK, '/memories?limit=20'), headers },
  { method: 'GET', path: bankPath(BANK), headers },
];

interface Sample {
  t: number;
  /** Resident memory of the server process. */
  rss: number;
  /** Its JavaScript heap's size: live data plus garbage not yet collected. */
  jsHeap: number;
  /** The JavaScript heap in use after the latest full garbage collection: live data. */
  liveHeap: number;
  /** Embedded engine's page cache holding data (resident once used; NaN on PostgreSQL). */
  cacheUsed: number;
}

const MB = 2 ** 20;

/** The server's memory: RSS from /proc, the rest from its /metrics. */
async function measure(url: string, pid: number | undefined, t: number): Promise<Sample> {
  const rss = rssMB(pid);
  try {
    const text = await (await fetch(`${url}/metrics`)).text();
    const jsHeap = (metricSample(text, 'nodejs_heap_size_total_bytes') ?? Number.NaN) / MB;
    const liveHeap = (metricSample(text, 'mnemo_heap_live_bytes') ?? Number.NaN) / MB;
    const cacheUsed =
      (metricSample(text, 'mnemo_embedded_engine_bytes', { kind: 'cache_used' }) ?? Number.NaN) / MB;
    return { t, rss, jsHeap, liveHeap, cacheUsed };
  } catch {
    return { t, rss, jsHeap: Number.NaN, liveHeap: Number.NaN, cacheUsed: Number.NaN };
  }
}

/** Mean of the first and last thirds of the judged samples, and a least-squares slope per minute. */
function trend(samples: Sample[], value: (s: Sample) => number) {
  const xs = samples.filter((s) => !Number.isNaN(value(s)));
  const third = Math.max(1, Math.floor(xs.length / 3));
  const mean = (ys: Sample[]) => ys.reduce((a, s) => a + value(s), 0) / ys.length;
  const tx = xs.reduce((a, s) => a + s.t, 0) / xs.length;
  const my = mean(xs);
  const slope =
    xs.reduce((a, s) => a + (s.t - tx) * (value(s) - my), 0) /
    Math.max(
      1e-9,
      xs.reduce((a, s) => a + (s.t - tx) ** 2, 0),
    );
  return { first: mean(xs.slice(0, third)), last: mean(xs.slice(-third)), perMinute: slope * 60 };
}

const fmt = (x: number) => (Number.isNaN(x) ? '-' : x.toFixed(0));

const bench = await startBenchServer(engine);
try {
  const pid = bench.server.child.pid;
  await seedBank(bench.url, 2000);
  out(`soak: ${engine}, ${minutes} min, ${connections} connections; memory every ${EVERY_S} s`);
  out('| t (s) | RSS MB | JS heap MB | live JS heap MB | page cache in use MB | requests so far |');
  out('|---:|---:|---:|---:|---:|---:|');
  let done = 0;
  const samples: Sample[] = [];
  const started = Date.now();
  const sample = async () => {
    const s = await measure(bench.url, pid, Math.round((Date.now() - started) / 1000));
    samples.push(s);
    out(`| ${s.t} | ${fmt(s.rss)} | ${fmt(s.jsHeap)} | ${fmt(s.liveHeap)} | ${fmt(s.cacheUsed)} | ${done} |`);
  };
  await sample();
  const timer = setInterval(sample, EVERY_S * 1000);
  const instance = autocannon({ url: bench.url, connections, duration: minutes * 60, timeout: 60, requests });
  instance.on('response', () => {
    done++;
  });
  const r = await instance;
  clearInterval(timer);
  await sample();

  const judged = samples.filter((s) => s.t >= WARMUP_S);
  out('');
  out(
    `requests ${r.requests.total} (${(r.requests.total / r.duration).toFixed(0)}/s), p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, ` +
      `errors ${r.errors + r.timeouts}, non-2xx ${r.non2xx}`,
  );
  const verdict = (label: string, value: (s: Sample) => number) => {
    const { first, last, perMinute } = trend(judged, value);
    if (Number.isNaN(first)) return;
    const change = last - first;
    out(
      `${label} after warm-up: first third ${first.toFixed(0)} MB, last third ${last.toFixed(0)} MB ` +
        `(${(change >= 0 ? '+' : '') + change.toFixed(0)} MB), slope ${perMinute.toFixed(2)} MB/min`,
    );
  };
  verdict('RSS', (s) => s.rss);
  // What a leak in mnemo's code would grow; the RSS also moves with garbage V8 has not collected
  // yet and with the page cache filling (bounded by its size).
  verdict('live JS heap', (s) => s.liveHeap);
  verdict('page cache in use', (s) => s.cacheUsed);
  out(
    `load average: ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')} (2 cores)`,
  );
} finally {
  await bench.close();
}
