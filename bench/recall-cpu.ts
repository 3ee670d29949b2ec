/**
 * CPU of one computed Recall, in-process, statement by statement: a bank of `--memories`
 * synthetic memories (as the load benchmark seeds), then `--recalls` Recalls of new queries one
 * after another through the app (no HTTP socket). Prints the process CPU per Recall, the
 * PostgreSQL backends' CPU per Recall, and every statement one Recall sends, with how often.
 *
 * Run: `npx tsx bench/recall-cpu.ts [--engine pglite|postgres] [--memories 10000] [--recalls 300]
 *   [--cpu-prof FILE [--heap-prof FILE]] [--each [--plans]] [--split] [--cache-mb N]` (PostgreSQL
 * needs MNEMO_TEST_DATABASE_URL).
 * `--split` (PostgreSQL): each statement's backend CPU as the Recalls ran it (prepared, its plan
 * as the app's), from the backend's /proc/PID/schedstat before the statement is sent and after
 * its answer, to the nanosecond (`/proc/PID/stat` counts in 10 ms ticks). With `--thread`
 * (PGlite): the engine thread's CPU and wall time per call, from the message's arrival to its
 * answer (`pglite-thread-trace.ts`), and how long a snapshot held the engine waiting for the main thread;
 * `--thread-prof FILE` adds a V8 profile of the engine's thread over the measured Recalls.
 * `--concurrent N`: N Recalls at a time instead of one (per-call CPU then overlaps; the threads'
 * totals and the snapshots' waits do not).
 * `--cpu-prof`: a V8 profile of the measured Recalls; `--heap-prof`: a sampling heap profile of
 * them that keeps the collected objects too (where the garbage comes from); `--each`: on PostgreSQL each statement alone,
 * 50 runs, its backend's CPU per run; on PGlite the main thread's CPU inside each exchange with
 * the engine (`bench/statement-cpu.ts`), summed per statement over the measured Recalls, and what
 * the thread spent outside them; `--plans`: EXPLAIN (ANALYZE, BUFFERS) of the channels and the
 * candidates. `--cache-mb`: PGlite's page cache (the tests' 16 MB otherwise; a server's default is 128).
 * `--keyword-cache-mb N`: the bound of the banks' postings copied into the process for keyword
 * search (`MNEMO_KEYWORD_CACHE_MB`; 0 turns it off).
 * `--thread`: PGlite on a thread of its own (`openPgliteThread`); the main thread's CPU per Recall
 * is printed apart. Not with `--each`, which times the exchanges on the main thread.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { loadavg } from 'node:os';
import pg from 'pg';
import { type EngineName, migratedTemplate, openTestDb, openTestStore } from '../test/helpers/engines.js';
import { TEST_CACHE_MB } from '../test/helpers/pglite-templates.js';
import type { Db } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';
import { storeOver } from '../src/store/open.js';
import { DEFAULT_KEYWORD_CACHE_MB } from '../src/store/keyword-memory.js';
import { openPglite } from '../src/store/pglite.js';
import { engineThreadTrace, openPgliteThread } from '../src/store/pglite-thread.js';
import { mainThreadCpuMs, statementCpu } from './statement-cpu.js';
import { testApp } from '../test/helpers/app.js';
import { BANK, RECALL_MAX_TOKENS, seedItems, variedQueries } from './load-driver.js';
import { flag } from './flags.js';

const argv = process.argv.slice(2);
const engine = flag('engine', 'postgres') as EngineName;
const memories = Number(flag('memories', '10000'));
const recalls = Number(flag('recalls', '300'));

// Every statement text the driver sends (PostgreSQL), counted while `counting`.
const sent = new Map<string, number>();
/** The last parameters of each statement counted (by its full text), to run alone with `--each`. */
const last = new Map<string, unknown[] | undefined>();
let database = '';
/** `--split`: each statement's backend CPU in ns, from /proc/PID/schedstat (by its full text). */
const split = argv.includes('--split') ? new Map<string, { n: number; ns: number }>() : null;
const onCpuNs = (pid: number) => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
let counting = false;
const backends = new Set<number>();
const original = pg.Client.prototype.query as (...a: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
  const pid = (this as unknown as { processID?: number }).processID;
  if (pid) backends.add(pid);
  if (counting) {
    // Keyed by the full text, shortened only when printed: a regular expression over every
    // statement's text here cost ~0.5 ms of the measured Node CPU per Recall.
    const q = a[0] as string | { text?: string };
    const full = typeof q === 'string' ? q : (q?.text ?? '?');
    sent.set(full, (sent.get(full) ?? 0) + 1);
    last.set(full, typeof q === 'string' ? undefined : (q as { values?: unknown[] }).values);
  }
  const db = (this as unknown as { database: string }).database;
  if (db.startsWith('mnemo_t_')) database = db; // the test database, not the one it was created from
  if (!(counting && split && pid)) return original.apply(this, a);
  // `--split`: the backend's CPU from the statement's send to its answer (nothing else runs on
  // its connection meanwhile: one Recall at a time, a snapshot's statements one after another).
  const q = a[0] as string | { text?: string };
  const full = typeof q === 'string' ? q : (q?.text ?? '?');
  const before = onCpuNs(pid);
  const done = () => {
    const s = split.get(full) ?? { n: 0, ns: 0 };
    s.n++;
    s.ns += onCpuNs(pid) - before;
    split.set(full, s);
  };
  const cb = a[a.length - 1];
  if (typeof cb === 'function') {
    // The pool's own queries answer through a callback.
    a[a.length - 1] = (...r: unknown[]) => {
      done();
      return cb(...r);
    };
    return original.apply(this, a);
  }
  const r = original.apply(this, a) as Promise<unknown>;
  r.then(done, done);
  return r;
} as typeof pg.Client.prototype.query;

// Installed before the engine opens, so that it sees every statement prepared.
const threaded = engine === 'pglite' && argv.includes('--thread');
if (threaded && argv.includes('--each'))
  throw new Error('--each times exchanges on the main thread: not with --thread');
const exchanges = engine === 'pglite' && argv.includes('--each') ? statementCpu() : null;
const cacheMb = Number(flag('cache-mb', '0'));
/** The banks' postings copied into the process (`--keyword-cache-mb`, 0: off; the default is a server's). */
const keywords = { keywordCacheMb: Number(flag('keyword-cache-mb', String(DEFAULT_KEYWORD_CACHE_MB))) };
/** The embedded engine's database, to read its prepared statements' plans after the run. */
let embedded: Db | null = null;
const store =
  engine === 'pglite'
    ? await (async () => {
        if (threaded) {
          const template = await migratedTemplate();
          embedded = await openPgliteThread(undefined, {
            cacheMb: cacheMb || TEST_CACHE_MB,
            template,
            trace: argv.includes('--split') ? { profile: flag('thread-prof', '') || undefined } : undefined,
          });
          await migrate(embedded);
        } else if (cacheMb) {
          embedded = await openPglite(undefined, { cacheMb });
          await migrate(embedded);
        } else embedded = (await openTestDb('pglite')).db;
        return storeOver(embedded, keywords);
      })()
    : await openTestStore(engine, keywords);
const t = await testApp(engine, { store, recallCacheSize: 0 });
const path = `/v1/default/banks/${encodeURIComponent(BANK)}/memories`;
for (let i = 0; i < memories; i += 500) {
  const items = seedItems(i, Math.min(500, memories - i));
  const r = await t.call('POST', path, { body: { items } });
  if (r.status !== 200) throw new Error(`seeding: ${r.status} ${JSON.stringify(r.body)}`);
}
const next = variedQueries(7);
const one = async () => {
  const r = await t.call('POST', `${path}/recall`, {
    body: { query: next(), budget: 'mid', max_tokens: RECALL_MAX_TOKENS },
  });
  if (r.status !== 200) throw new Error(`recall: ${r.status} ${JSON.stringify(r.body)}`);
};
if (argv.includes('--vacuum') && engine === 'postgres') {
  // What autovacuum (off on the test server) would have done by now: the visibility map.
  await one();
  const url = new URL(process.env.MNEMO_TEST_DATABASE_URL!);
  url.pathname = `/${database}`;
  const c = new pg.Client({ connectionString: url.toString() });
  await c.connect();
  await c.query('VACUUM (ANALYZE)');
  await c.end();
}
for (let i = 0; i < 100; i++) await one(); // warm-up: compile, prepare, memoize the bank's texts
/** CPU seconds each backend this process talked to has used so far (PostgreSQL on this machine). */
const dbCpu = () => {
  const used = new Map<number, number>();
  for (const pid of backends) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      used.set(pid, (Number(f[11]) + Number(f[12])) / 100);
    } catch {}
  }
  return used;
};
/**
 * Seconds used between two readings, a backend new since counted from 0. One gone since (the
 * pool closes a connection idle for 10 s) is left out: before, its CPU at the first reading was
 * subtracted from the total (-3.13 ms per Recall once).
 */
const dbSpent = (before: Map<number, number>, after: Map<number, number>) =>
  [...after].reduce((sum, [pid, t]) => sum + t - (before.get(pid) ?? 0), 0);
/** CPU ms of each of this process's threads so far, by thread id (with its name). */
const threadsCpu = () => {
  const out = new Map<string, { name: string; ms: number }>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      out.set(tid, { name, ms: (Number(f[11]) + Number(f[12])) * 10 });
    } catch {}
  }
  return out;
};
const traced = threaded && split ? embedded : null;
if (traced) await engineThreadTrace(traced);
const threads0 = threadsCpu();
const db0 = dbCpu();
const main0 = mainThreadCpuMs();
const cpu0 = process.cpuUsage();
const wall0 = performance.now();
const profile = flag('cpu-prof', '');
const session = profile ? new Session() : null;
const post = (method: string, params?: object) =>
  new Promise<unknown>((resolve, reject) =>
    session!.post(method, params, (err, r) => (err ? reject(err) : resolve(r))),
  );
const heapProfile = flag('heap-prof', '');
if (heapProfile && !session) throw new Error('--heap-prof needs --cpu-prof');
if (session) {
  session.connect();
  if (heapProfile) {
    // Every allocation sampled, the garbage too: where a Recall's garbage comes from.
    await post('HeapProfiler.startSampling', {
      samplingInterval: 4096,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  }
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 200 });
  await post('Profiler.start');
}
counting = true;
exchanges?.begin();
const concurrent = Number(flag('concurrent', '1'));
{
  // `--concurrent N`: N Recalls in flight at once (the main thread busy with the others' work
  // while the engine answers one): the snapshots' waits for it, as a server under load has them.
  let left = recalls;
  await Promise.all(
    Array.from({ length: concurrent }, async () => {
      while (left-- > 0) await one();
    }),
  );
}
exchanges?.pause();
counting = false;
const mainMs = mainThreadCpuMs() - main0;
const trace = traced ? await engineThreadTrace(traced) : null;
if (session) {
  const { profile: p } = (await post('Profiler.stop')) as { profile: unknown };
  writeFileSync(profile, JSON.stringify(p));
  if (heapProfile) {
    const { profile: h } = (await post('HeapProfiler.stopSampling')) as { profile: unknown };
    writeFileSync(heapProfile, JSON.stringify(h));
  }
}
const cpu = process.cpuUsage(cpu0);
const wall = performance.now() - wall0;
const db1 = dbCpu();
process.stdout.write(
  `${engine}, ${memories} memories, ${recalls} Recalls: Node ${((cpu.user + cpu.system) / 1000 / recalls).toFixed(2)} ms CPU per Recall (user ${(cpu.user / 1000 / recalls).toFixed(2)}, system ${(cpu.system / 1000 / recalls).toFixed(2)}), database ${((dbSpent(db0, db1) * 1000) / recalls).toFixed(2)} ms, wall ${(wall / recalls).toFixed(2)} ms; load ${loadavg()[0]!.toFixed(1)}\n` +
    `main thread ${(mainMs / recalls).toFixed(2)} ms CPU per Recall${threaded ? ' (the engine on its own thread)' : ''}\n`,
);
{
  // Each thread's share: the main thread, the engine's (with --thread), V8's and libuv's helpers.
  const byName = new Map<string, number>();
  for (const [tid, t] of threadsCpu()) {
    const name = tid === String(process.pid) ? 'main' : t.name;
    byName.set(name, (byName.get(name) ?? 0) + t.ms - (threads0.get(tid)?.ms ?? 0));
  }
  process.stdout.write(
    `threads, CPU ms per Recall: ${[...byName].map(([n, ms]) => `${n} ${(ms / recalls).toFixed(2)}`).join(', ')}\n`,
  );
}
const short = (text: string) => text.replace(/\s+/g, ' ').slice(0, 110);
if (trace) {
  const inside = trace.calls.reduce((n, c) => n + c.cpuMs, 0);
  const per = (x: number) => (x / recalls).toFixed(3).padStart(7);
  process.stdout.write(
    // Calls that overlap (`--concurrent`) are each charged the others' CPU, and a call's wall
    // time then counts its wait behind them: only the totals and the waits for the main thread hold.
    (concurrent === 1
      ? `engine thread: ${per(trace.cpuMs)} ms CPU per Recall, inside calls ${per(inside)}, outside ${per(trace.cpuMs - inside)}\n` +
        `snapshots: held ${per(trace.heldMs)} ms wall per Recall, of which waiting for the main thread ${per(trace.heldIdleMs)} ms (${(trace.gaps / recalls).toFixed(2)} waits)\n`
      : `engine thread: ${per(trace.cpuMs)} ms CPU per Recall\n` +
        `snapshots: waiting for the main thread ${per(trace.heldIdleMs)} ms per Recall (${(trace.gaps / recalls).toFixed(2)} waits)\n`) +
      'calls per Recall, engine-thread CPU ms per Recall, wall ms per Recall, waited for it ms per Recall, call:\n',
  );
  for (const c of trace.calls)
    process.stdout.write(
      `${(c.n / recalls).toFixed(2).padStart(6)} ${per(c.cpuMs)} ${per(c.wallMs)} ${per(c.waitedMs)}  ${short(c.what)}\n`,
    );
}
if (exchanges) {
  const totals = exchanges.totals();
  const inside = totals.reduce((n, t) => n + t.cpuMs, 0);
  process.stdout.write(
    `main thread ${(mainMs / recalls).toFixed(2)} ms CPU per Recall: inside the engine's exchanges ${(inside / recalls).toFixed(2)}, outside ${((mainMs - inside) / recalls).toFixed(2)}\n` +
      'exchanges per Recall, main-thread CPU ms per Recall, per exchange, statement:\n',
  );
  for (const x of totals)
    process.stdout.write(
      `${(x.n / recalls).toFixed(2).padStart(6)} ${(x.cpuMs / recalls).toFixed(3).padStart(7)} ${(x.cpuMs / x.n).toFixed(3).padStart(7)}  ${short(x.sql)}\n`,
    );
  exchanges.stop();
  // Whether the engine kept generic plans: planning in WebAssembly is costly.
  const plans = await embedded!.query<{ generic: number; custom: number; statement: string }>(
    `SELECT generic_plans::int AS generic, custom_plans::int AS custom, statement FROM pg_prepared_statements
     ORDER BY custom_plans DESC LIMIT 8`,
  );
  process.stdout.write('prepared statements: generic plans, custom plans, statement:\n');
  for (const p of plans)
    process.stdout.write(
      `${String(p.generic).padStart(6)} ${String(p.custom).padStart(6)}  ${short(p.statement)}\n`,
    );
}
for (const [text, n] of [...sent].sort((a, b) => b[1] - a[1]))
  process.stdout.write(
    `${(n / recalls).toFixed(2).padStart(6)}${split ? ` ${((split.get(text)?.ns ?? 0) / 1e6 / recalls).toFixed(3).padStart(7)} ms` : ''} ${short(text)}\n`,
  );
if (split) {
  const all = [...split.values()].reduce((t, s) => t + s.ns, 0);
  process.stdout.write(
    `statements' backend CPU per Recall (schedstat): ${(all / 1e6 / recalls).toFixed(3)} ms\n`,
  );
}
if (engine === 'postgres' && argv.includes('--each')) {
  // The last statements seen are those of a query with a window relative to today, over a bank
  // of older memories: every channel runs.
  counting = true;
  await t.call('POST', `${path}/recall`, {
    body: {
      query: 'What did Alice cook at the market last week?',
      budget: 'mid',
      max_tokens: RECALL_MAX_TOKENS,
    },
  });
  counting = false;
  // Each statement alone, 50 times on one connection (prepared, with the vector walk's settings
  // in its transaction): its backend's CPU per run.
  const url = new URL(process.env.MNEMO_TEST_DATABASE_URL!);
  url.pathname = `/${database}`;
  const c = new pg.Client({ connectionString: url.toString() });
  await c.connect();
  const pid = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const own = (): number => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  };
  let i = 0;
  for (const [text, values] of last) {
    if (/^(BEGIN|COMMIT)/.test(text)) continue;
    const name = `each_${++i}`;
    const runs = 50;
    await c.query('BEGIN');
    await c.query(
      "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', '200', true), set_config('plan_cache_mode', 'force_custom_plan', true)",
    );
    await c.query({ name, text, values });
    const before = own();
    const started = performance.now();
    for (let k = 0; k < runs; k++) await c.query({ name, text, values });
    const after = own();
    const ms = (performance.now() - started) / runs;
    if (argv.includes('--plans') && /^SELECT (ch|m\.id)/.test(text)) {
      // The keyword function's own statement too: auto_explain sends nested plans as notices.
      const notices: string[] = [];
      const onNotice = (n: { message?: string }) => notices.push(n.message ?? '');
      c.on('notice', onNotice);
      await c.query(
        "LOAD 'auto_explain'; SET LOCAL auto_explain.log_min_duration = 0; SET LOCAL auto_explain.log_analyze = on; SET LOCAL auto_explain.log_buffers = on; SET LOCAL auto_explain.log_nested_statements = on; SET LOCAL client_min_messages = log",
      );
      await c.query({ name, text, values });
      await c.query('SET LOCAL auto_explain.log_min_duration = -1; SET LOCAL client_min_messages = notice');
      c.off('notice', onNotice);
      process.stdout.write(
        `${notices.filter((n) => n.includes('mnemo_keyword_search') || n.includes('WITH stats')).join('\n')}\n`,
      );
      await c.query(`PREPARE each_plan AS ${text}`);
      const plan = await c.query(
        `EXPLAIN (ANALYZE, BUFFERS) EXECUTE each_plan(${(values ?? []).map((v) => (v === null ? 'NULL' : `'${(Array.isArray(v) ? `{${v.map((x) => JSON.stringify(x)).join(',')}}` : v instanceof Date ? v.toISOString() : String(v)).replace(/'/g, "''")}'`)).join(', ')})`,
      );
      process.stdout.write(`${plan.rows.map((r) => r['QUERY PLAN']).join('\n')}\n`);
      await c.query('DEALLOCATE each_plan');
    }
    await c.query('ROLLBACK');
    process.stdout.write(
      `${(((after - before) * 1000) / runs).toFixed(2).padStart(6)} ms CPU ${ms.toFixed(2).padStart(6)} ms wall  ${short(text)}\n`,
    );
  }
  await c.end();
}
await t.close();
