/**
 * Soak: a mixed load (recall, Retain, listing, bank profile) against a `mnemo serve` child
 * process for 10 minutes, printing the server's resident memory every 30 s. Memory should be
 * flat: after the first minutes (caches filling, the JIT warming) the RSS stays within a band
 * instead of climbing. The verdict compares the mean of the first and last thirds of the samples
 * after warm-up and fits a slope.
 *
 * Run: `npx tsx bench/soak.ts [--engine pglite|postgres] [--minutes 10] [--connections 16]`
 * (postgres needs MNEMO_BENCH_DATABASE_URL or MNEMO_TEST_DATABASE_URL).
 */
import { loadavg } from 'node:os';
import autocannon, { type Request } from 'autocannon';
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

const bench = await startBenchServer(engine);
try {
  const pid = bench.server.child.pid;
  await seedBank(bench.url, 2000);
  out(`soak: ${engine}, ${minutes} min, ${connections} connections; RSS every ${EVERY_S} s`);
  out('| t (s) | RSS MB | requests so far |');
  out('|---:|---:|---:|');
  let done = 0;
  const samples: { t: number; mb: number }[] = [];
  const started = Date.now();
  const sample = () => {
    const t = Math.round((Date.now() - started) / 1000);
    const mb = rssMB(pid);
    samples.push({ t, mb });
    out(`| ${t} | ${mb.toFixed(0)} | ${done} |`);
  };
  sample();
  const timer = setInterval(sample, EVERY_S * 1000);
  const instance = autocannon({ url: bench.url, connections, duration: minutes * 60, timeout: 60, requests });
  instance.on('response', () => {
    done++;
  });
  const r = await instance;
  clearInterval(timer);
  sample();

  const judged = samples.filter((s) => s.t >= WARMUP_S && !Number.isNaN(s.mb));
  const third = Math.max(1, Math.floor(judged.length / 3));
  const mean = (xs: { mb: number }[]) => xs.reduce((a, s) => a + s.mb, 0) / xs.length;
  const first = mean(judged.slice(0, third));
  const last = mean(judged.slice(-third));
  const n = judged.length;
  const tx = judged.reduce((a, s) => a + s.t, 0) / n;
  const my = mean(judged);
  const slope =
    judged.reduce((a, s) => a + (s.t - tx) * (s.mb - my), 0) /
    Math.max(
      1e-9,
      judged.reduce((a, s) => a + (s.t - tx) ** 2, 0),
    );
  out('');
  out(
    `requests ${r.requests.total} (${(r.requests.total / r.duration).toFixed(0)}/s), p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, ` +
      `errors ${r.errors + r.timeouts}, non-2xx ${r.non2xx}`,
  );
  out(
    `RSS after warm-up: first third ${first.toFixed(0)} MB, last third ${last.toFixed(0)} MB ` +
      `(${(last - first >= 0 ? '+' : '') + (last - first).toFixed(0)} MB), slope ${(slope * 60).toFixed(2)} MB/min`,
  );
  out(
    `load average: ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')} (2 cores)`,
  );
} finally {
  await bench.close();
}
