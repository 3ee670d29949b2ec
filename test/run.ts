/**
 * Runs the `*.test.ts` files under src/, test/ and packages/ with node's test runner through tsx.
 * Node 20's `--test` does not expand globs, so the files are found here.
 *
 *   npm test                      every file, on both engines when MNEMO_TEST_DATABASE_URL is set
 *   npm run test:fast             the fast tier (test/runner/tiers.ts), embedded engine only
 *   npm test -- store api         files whose path contains one of the words
 *
 * Each test gets a default timeout (test/runner/timeouts.ts), files run as many at a time as
 * the machine has cores (MNEMO_TEST_CONCURRENCY overrides), and the summary says loudly what
 * did not run. With CI=1 a skipped engine or browser suite fails the run.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { missingCaches } from './runner/caches.js';
import { costliestFirstByTable, readCosts } from './runner/costs.js';
import { costliestFirst, fillQueue } from './runner/queue.js';
import { isSlow } from './runner/tiers.js';

/** What test/runner/skips.mjs writes. */
type SkipLine = { kind: 'skip'; file?: string; name?: string; reason: string };
type TimeLine = { kind: 'time'; file?: string; ms: number };
/**
 * What test/runner/cpu.ts writes (`cpu`: the CPU time of one test process, named by its file) and
 * test/runner/worker.ts (`cpu-file`: the CPU time of one file in a fast-tier worker).
 */
type CpuLine = { kind: 'cpu' | 'cpu-file'; file: string; ms: number; idleMs?: number };

const CHROMIUM = '/usr/bin/chromium';
/** A skip with one of these reasons is a missing engine or browser: CI must not have any. */
const ENGINE_OR_BROWSER = /MNEMO_TEST_DATABASE_URL|postgres|pg_dump|pg_restore|chromium|browser/i;
/** Suites that run only under `npm run soak`. */
const OPT_IN = /MNEMO_SOAK/;
/** A whole file is stopped after this long (a hang outside any test). */
const FILE_TIMEOUT_MS = 30 * 60_000;
/** Builds the caches the test processes read, when one is missing (test/runner/caches.ts). */
const CACHES = 'test/runner/caches.ts';
/** The fast tier's workers (test/runner/worker.ts) are started as these files. */
const WORKER = /mnemo-test-worker-\d+\.mjs$/;
/** The CPU time of each file at its last fast-tier run, to order the next run's queue. */
const HISTORY = 'node_modules/.cache/mnemo/test-cpu.json';

function find(dir: string, out: string[]): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) find(path, out);
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const args = process.argv.slice(2);
const fast = args.includes('--fast');
const filters = args.filter((a) => a !== '--fast');
const ci = process.env.CI === '1' || process.env.CI === 'true';
const found = ['src', 'test', 'packages']
  .flatMap((d) => find(d, []))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .filter((f) => !fast || !isSlow(f))
  .sort();
// The whole suite starts its costliest files first (test/runner/costs.ts); the fast tier's
// queue orders itself below, by this machine's history.
const files = fast ? found : costliestFirstByTable(found, readCosts());
if (files.length === 0) {
  process.stderr.write('no test files matched\n');
  process.exit(1);
}

const concurrency = Number(process.env.MNEMO_TEST_CONCURRENCY) || availableParallelism();
const env: NodeJS.ProcessEnv = { ...process.env, MNEMO_LOG_LEVEL: process.env.MNEMO_LOG_LEVEL ?? 'silent' };
if (fast) delete env.MNEMO_TEST_DATABASE_URL;
// The fast tier empties closed embedded test databases and reuses them within a worker
// (test/helpers/pglite-pool.ts); the whole suite opens each afresh, as CI always has.
env.MNEMO_TEST_PGLITE_REUSE ??= fast ? '1' : '0';
// The run's processes share one migrated PostgreSQL template (test/helpers/pg-template.ts),
// dropped when they are done.
const run = randomBytes(4).toString('hex');
env.MNEMO_TEST_RUN = run;
const work = mkdtempSync(join(tmpdir(), 'mnemo-test-run-'));
const events = join(work, 'events.jsonl');
// Set it to keep the per-file CPU times after the run (lines are appended).
env.MNEMO_TEST_CPU_LOG ??= join(work, 'cpu.jsonl');
const started = Date.now();

/**
 * Fast-tier files run in one worker process per core, each taking files from a shared queue
 * (test/runner/queue.ts): the fast tier's by this machine's history, the whole suite's by the
 * committed table. The whole suite runs each slow-tier file in a process of its own (they start
 * servers and processes, bound themselves, fill large banks), costliest first, and the workers
 * after them: the workers share out the rest, so both cores stay busy to the end.
 */
const own = fast ? [] : files.filter((f) => isSlow(f));
const pooled = fast ? files : files.filter((f) => !isSlow(f));
const workers = Math.min(concurrency, pooled.length);
const queue = join(work, 'queue');
let targets = own;
if (workers > 0) {
  const paths = pooled.map((f) => resolve(f));
  fillQueue(queue, fast ? costliestFirst(paths, readHistory()) : paths);
  env.MNEMO_TEST_QUEUE = queue;
  const worker = pathToFileURL(resolve('test/runner/worker.ts')).href;
  targets = targets.concat(
    Array.from({ length: workers }, (_, i) => {
      const path = join(work, `mnemo-test-worker-${i + 1}.mjs`);
      writeFileSync(path, `import ${JSON.stringify(worker)};\n`);
      return path;
    }),
  );
}

// On a fresh machine: the caches every test process reads, built once before they start
// rather than by the first ones all at once (test/runner/caches.ts).
if (missingCaches(env).length > 0) {
  const built = spawnSync(process.execPath, ['--import', 'tsx', '--import', './test/runner/cpu.ts', CACHES], {
    stdio: 'inherit',
    env,
  });
  if (built.status !== 0)
    process.stderr.write('!! could not build the test caches: each test process will\n');
}

const child = spawn(
  process.execPath,
  [
    // PGlite is a WebAssembly Postgres: V8 recompiles its hot functions with TurboFan in the
    // background, which in a short test process costs more CPU than it saves (~1.2 s of a 5 s
    // API test file). A hundred times the default budget tiers up only what stays hot.
    '--wasm-tiering-budget=180000000',
    // MNEMO_TEST_CPU_PROF=dir: a V8 CPU profile of every test process (the workers' are where the
    // fast tier's time goes), for `--cpu-prof` is not allowed in NODE_OPTIONS.
    ...(process.env.MNEMO_TEST_CPU_PROF
      ? [
          '--cpu-prof',
          `--cpu-prof-dir=${resolve(process.env.MNEMO_TEST_CPU_PROF)}`,
          '--cpu-prof-interval=1000',
        ]
      : []),
    '--import',
    'tsx',
    '--import',
    './test/runner/timeouts.ts',
    '--import',
    './test/runner/cpu.ts',
    '--import',
    './test/runner/databases.ts',
    '--test',
    `--test-concurrency=${fast ? workers : concurrency}`,
    `--test-timeout=${FILE_TIMEOUT_MS}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=./test/runner/skips.mjs',
    `--test-reporter-destination=${events}`,
    ...targets,
  ],
  { stdio: 'inherit', env },
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
child.on('exit', async (code, signal) => {
  const failed = code !== 0 || signal !== null;
  const problems = summary(Date.now() - started, code !== 0);
  rmSync(work, { recursive: true, force: true });
  if (env.MNEMO_TEST_DATABASE_URL) {
    try {
      await (await import('./helpers/pg-template.js')).dropRunTemplates(run);
    } catch (err) {
      process.stderr.write(`!! could not drop the run's PostgreSQL template database: ${String(err)}\n`);
    }
  }
  process.exit(failed || problems ? 1 : 0);
});

/**
 * Prints what did not run and the slowest files; true when the run must fail for it (in CI, a
 * skipped engine or browser; files a worker never finished).
 */
function summary(ms: number, testsFailed: boolean): boolean {
  const lines = existsSync(events)
    ? readFileSync(events, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as SkipLine | TimeLine)
    : [];
  const rel = (f?: string) => (f ? relative(process.cwd(), f) : '?');
  const cpu = existsSync(env.MNEMO_TEST_CPU_LOG!)
    ? readFileSync(env.MNEMO_TEST_CPU_LOG!, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as CpuLine)
    : [];
  const skips = lines.filter((l): l is SkipLine => l.kind === 'skip');
  const unfinished = workers > 0 ? unfinishedFiles(cpu) : [];
  const perFile = new Map<string, number>();
  for (const l of lines)
    if (l.kind === 'time') perFile.set(rel(l.file), (perFile.get(rel(l.file)) ?? 0) + l.ms);

  const out: string[] = [];
  const missing: string[] = [];
  if (!env.MNEMO_TEST_DATABASE_URL) {
    missing.push(
      fast
        ? 'PostgreSQL engine: not run (the fast tier is embedded only; `npm test` runs both)'
        : 'PostgreSQL engine: NOT TESTED — MNEMO_TEST_DATABASE_URL is not set, every suite ran on PGlite only',
    );
  }
  if (!existsSync(CHROMIUM)) missing.push(`browser: NOT TESTED — no Chromium at ${CHROMIUM}`);
  const blocking = skips.filter(
    (s) => !OPT_IN.test(s.reason) && (s.reason === '' || ENGINE_OR_BROWSER.test(s.reason)),
  );
  const wholeRun = filters.length === 0 && !fast;
  const ciFails = ci && !fast && (blocking.length > 0 || (wholeRun && missing.length > 0));

  if (missing.length > 0 || skips.length > 0 || unfinished.length > 0) {
    const bar = '!'.repeat(78);
    out.push('', bar, `!! NOT EVERYTHING RAN${fast ? ' (fast tier)' : ''}`);
    for (const m of missing) out.push(`!!   ${m}`);
    // The fast tier leaves PostgreSQL out on purpose: its engine-only suites are only counted.
    const listed = fast ? skips.filter((s) => !ENGINE_OR_BROWSER.test(s.reason)) : skips;
    if (listed.length < skips.length)
      out.push(`!!   ${skips.length - listed.length} PostgreSQL-only suite(s) not run`);
    if (listed.length > 0) {
      out.push(`!!   ${listed.length} skipped test(s) or suite(s):`);
      for (const s of listed)
        out.push(`!!     ${rel(s.file)} › ${s.name} — ${s.reason || 'no reason given'}`);
    }
    if (unfinished.length > 0) {
      // A worker stopped (a timeout, a crash): the files it held or never took did not run.
      out.push(`!!   ${unfinished.length} file(s) NOT RUN or not finished: a worker stopped early`);
      for (const f of unfinished) out.push(`!!     ${rel(f)}`);
    }
    if (ciFails) out.push('!!   CI=1: a skipped engine or browser suite fails the run');
    out.push(bar);
  }
  const top = (m: Iterable<[string, number]>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([f, t]) => `${f} ${(t / 1000).toFixed(1)} s`)
      .join(', ');
  const processes = cpu.filter((c) => c.kind === 'cpu');
  const cpuTotal = processes.reduce((sum, c) => sum + c.ms, 0);
  const building = cpu.filter((c) => c.kind === 'cpu' && c.file.endsWith(CACHES));
  const perFileCpu = cpu.filter(
    (c) => c.kind === 'cpu-file' || !(WORKER.test(c.file) || c.file.endsWith(CACHES)),
  );
  const buildingMs = building.reduce((sum, c) => sum + c.ms, 0);
  const inFiles = perFileCpu.reduce((sum, c) => sum + c.ms, 0);
  out.push(
    '',
    `${files.length} files${fast ? ' (fast tier)' : ''}${workers > 0 ? ` (${pooled.length} in ${workers} worker processes)` : ''}, concurrency ${fast ? workers : concurrency}, ` +
      `${(ms / 1000).toFixed(1)} s wall, ${(cpuTotal / 1000).toFixed(1)} s CPU in test processes` +
      (workers > 0
        ? ` (${((cpuTotal - inFiles - buildingMs) / 1000).toFixed(1)} s of it starting the workers)`
        : '') +
      (building.length > 0 ? ` (${(buildingMs / 1000).toFixed(1)} s building the test caches first)` : ''),
    `slowest files (wall): ${top(perFile)}`,
    `costliest files (CPU): ${top(perFileCpu.map((c) => [rel(c.file), c.ms] as [string, number]))}`,
  );
  // A worker's file waiting on timers or sockets holds the worker without using it.
  const waits = cpu.filter((c) => c.kind === 'cpu-file' && c.idleMs !== undefined);
  if (waits.length > 0)
    out.push(
      `longest waits (idle in a worker): ${top(waits.map((c) => [rel(c.file), c.idleMs!] as [string, number]))}`,
    );
  process.stdout.write(`${out.join('\n')}\n`);
  // A failed run's times are partial; a passing one's order the next run's queue.
  if (fast && !testsFailed) writeHistory(perFileCpu);
  return ciFails || unfinished.length > 0;
}

/** Fast-tier files left in the queue, or taken by a worker that never reported them finished. */
function unfinishedFiles(cpu: CpuLine[]): string[] {
  const done = new Set(cpu.filter((c) => c.kind === 'cpu-file').map((c) => c.file));
  const left = (dir: string) =>
    existsSync(dir) ? readdirSync(dir).map((n) => readFileSync(join(dir, n), 'utf8')) : [];
  return [...left(join(queue, 'waiting')), ...left(join(queue, 'taken')).filter((f) => !done.has(f))].sort();
}

function readHistory(): Record<string, number> {
  try {
    const saved = JSON.parse(readFileSync(HISTORY, 'utf8')) as Record<string, number>;
    return Object.fromEntries(Object.entries(saved).map(([f, ms]) => [resolve(f), ms]));
  } catch {
    return {}; // never run here, or unreadable: the queue keeps the files' order
  }
}

function writeHistory(measured: CpuLine[]): void {
  const history = Object.fromEntries(
    Object.entries(readHistory()).map(([f, ms]) => [relative(process.cwd(), f), ms]),
  );
  for (const c of measured) history[relative(process.cwd(), c.file)] = Math.round(c.ms);
  mkdirSync(dirname(HISTORY), { recursive: true });
  writeFileSync(HISTORY, `${JSON.stringify(history, null, 1)}\n`);
}
