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
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { isSlow } from './runner/tiers.js';

/** What test/runner/skips.mjs writes. */
type SkipLine = { kind: 'skip'; file?: string; name?: string; reason: string };
type TimeLine = { kind: 'time'; file?: string; ms: number };
/** What test/runner/cpu.ts writes: the CPU time of one file's process. */
type CpuLine = { kind: 'cpu'; file: string; ms: number };

const CHROMIUM = '/usr/bin/chromium';
/** A skip with one of these reasons is a missing engine or browser: CI must not have any. */
const ENGINE_OR_BROWSER = /MNEMO_TEST_DATABASE_URL|postgres|pg_dump|pg_restore|chromium|browser/i;
/** Suites that run only under `npm run soak`. */
const OPT_IN = /MNEMO_SOAK/;
/** A whole file is stopped after this long (a hang outside any test). */
const FILE_TIMEOUT_MS = 30 * 60_000;

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
const files = ['src', 'test', 'packages']
  .flatMap((d) => find(d, []))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .filter((f) => !fast || !isSlow(f))
  .sort();
if (files.length === 0) {
  process.stderr.write('no test files matched\n');
  process.exit(1);
}

const concurrency = Number(process.env.MNEMO_TEST_CONCURRENCY) || availableParallelism();
const env: NodeJS.ProcessEnv = { ...process.env, MNEMO_LOG_LEVEL: process.env.MNEMO_LOG_LEVEL ?? 'silent' };
if (fast) delete env.MNEMO_TEST_DATABASE_URL;
const work = mkdtempSync(join(tmpdir(), 'mnemo-test-run-'));
const events = join(work, 'events.jsonl');
// Set it to keep the per-file CPU times after the run (lines are appended).
env.MNEMO_TEST_CPU_LOG ??= join(work, 'cpu.jsonl');
const started = Date.now();

const child = spawn(
  process.execPath,
  [
    // PGlite is a WebAssembly Postgres: V8 recompiles its hot functions with TurboFan in the
    // background, which in a short test process costs more CPU than it saves (~1.2 s of a 5 s
    // API test file). A hundred times the default budget tiers up only what stays hot.
    '--wasm-tiering-budget=180000000',
    '--import',
    'tsx',
    '--import',
    './test/runner/timeouts.ts',
    '--import',
    './test/runner/cpu.ts',
    '--test',
    `--test-concurrency=${concurrency}`,
    `--test-timeout=${FILE_TIMEOUT_MS}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=./test/runner/skips.mjs',
    `--test-reporter-destination=${events}`,
    ...files,
  ],
  { stdio: 'inherit', env },
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  const failed = code !== 0 || signal !== null;
  const problems = summary(Date.now() - started);
  rmSync(work, { recursive: true, force: true });
  process.exit(failed || problems ? 1 : 0);
});

/** Prints what did not run and the slowest files; true when CI must fail for it. */
function summary(ms: number): boolean {
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

  if (missing.length > 0 || skips.length > 0) {
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
    if (ciFails) out.push('!!   CI=1: a skipped engine or browser suite fails the run');
    out.push(bar);
  }
  const top = (m: Iterable<[string, number]>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([f, t]) => `${f} ${(t / 1000).toFixed(1)} s`)
      .join(', ');
  const cpuTotal = cpu.reduce((sum, c) => sum + c.ms, 0);
  out.push(
    '',
    `${files.length} files${fast ? ' (fast tier)' : ''}, concurrency ${concurrency}, ${(ms / 1000).toFixed(1)} s wall, ` +
      `${(cpuTotal / 1000).toFixed(1)} s CPU in test processes`,
    `slowest files (wall): ${top(perFile)}`,
    `costliest files (CPU): ${top(cpu.map((c) => [rel(c.file), c.ms] as [string, number]))}`,
  );
  process.stdout.write(`${out.join('\n')}\n`);
  return ciFails;
}
