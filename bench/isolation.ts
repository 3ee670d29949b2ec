/**
 * Tenant isolation: tenant A sends a heavy Retain (ITEMS items × ENTITIES new entities each) on
 * the request path, then the same again as an async Retain, and the consolidation both trigger
 * runs behind them; meanwhile tenant B probes `/health` and its own Recall over HTTP, and sends
 * a small async Retain of its own. Prints B's worst and p99 latency, how long B's async Retain
 * took to complete (and whether A's backlog was still there when it did), and the event loop's
 * worst delay (perf_hooks monitorEventLoopDelay) in this process, which runs the server, its
 * worker and the embedded engine, and the CPU its longest synchronous steps took (`stepCpu`:
 * on a loaded machine the wall figures mostly measure the machine).
 * Engines: PGlite in memory (`--disk`: in a data directory on disk, as `mnemo serve` runs it),
 * and PostgreSQL when MNEMO_TEST_DATABASE_URL is set.
 * Run: `npx tsx bench/isolation.ts [--items 200] [--entities 100] [--seconds 120] [--disk]`; `--bodies`:
 * the 10 MB request body case (`benchBodies`).
 */
import { serve } from '@hono/node-server';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { openStore } from '../src/store/open.js';
import { testApp } from '../test/helpers/app.js';
import { ENGINES, type EngineName, seedDataDir } from '../test/helpers/engines.js';
import { mainThreadCpuMs, statementCpu } from './statement-cpu.js';

export interface IsolationOptions {
  engines?: EngineName[];
  items?: number;
  entities?: number;
  /** Cap on the whole scenario per engine; whatever is unfinished then is reported as such. */
  seconds?: number;
  /** The embedded engine in a data directory on disk (as `mnemo serve` runs it) rather than in memory. */
  disk?: boolean;
  log?: (line: string) => void;
}

export interface IsolationRow {
  engine: string;
  workload: string;
  bProbes: number;
  bWorstMs: number;
  bP99Ms: number;
  healthWorstMs: number;
  recallWorstMs: number;
  bAsyncRetainMs: number | string;
  aBacklogLeftThen: string;
  aDoneMs: number | string;
  loopMaxMs: number;
  loopP99Ms: number;
  /** CPU the main thread spent in its longest run without a 5 ms timer tick: the load-independent size of its longest synchronous step. */
  stepCpuMaxMs: number;
  /** 99th percentile of the CPU between two ticks, over the ticks that ran late (> 10 ms). */
  stepCpuP99Ms: number;
  /** Runs between ticks that took over 50 ms of CPU. */
  stepsOver50Ms: number;
  /** The longest step measured in the process's CPU (all threads), as this bench did before. */
  stepProcessCpuMaxMs: number;
  /** Embedded engine: exchanges timed, and those over 30 and 50 ms of CPU (`statementCpu`). */
  statements?: number;
  statementsOver30Ms?: number;
  statementsOver50Ms?: number;
  statementsOver50MsProcess?: number;
  /** Garbage collection pauses over 50 ms, and the longest (wall). */
  gcOver50Ms?: number;
  gcMaxMs?: number;
}

/**
 * Measures the CPU each late turn of the event loop took: a timer ticks every 5 ms, and the
 * main thread's CPU between two ticks that are further apart is (about) what held the loop. On
 * a shared machine the wall time of a stall also counts the time the process was not scheduled
 * at all; this does not.
 */
function stepCpu(explain?: (from: number, to: number) => string) {
  const late: number[] = [];
  /** The longest steps, with what ran in them. */
  const longest: { cpuMs: number; what: string }[] = [];
  const lateProcess: number[] = [];
  let last = performance.now();
  let cpu = mainThreadCpuMs();
  let processCpu = process.cpuUsage();
  const timer = setInterval(() => {
    const now = performance.now();
    const used = mainThreadCpuMs() - cpu;
    const p = process.cpuUsage(processCpu);
    if (now - last > 10) {
      late.push(used);
      lateProcess.push((p.user + p.system) / 1000);
      if (explain && used > 25 && (longest.length < 5 || used > longest[4]!.cpuMs)) {
        longest.push({ cpuMs: Math.round(used), what: explain(last, now) });
        longest.sort((a, b) => b.cpuMs - a.cpuMs);
        longest.length = Math.min(longest.length, 5);
      }
    }
    last = now;
    cpu = mainThreadCpuMs();
    processCpu = process.cpuUsage();
  }, 5);
  return {
    stop() {
      clearInterval(timer);
      return {
        stepCpuMaxMs: Math.round(Math.max(0, ...late)),
        stepCpuP99Ms: Math.round(pct(late, 0.99)),
        stepsOver50Ms: late.filter((x) => x > 50).length,
        stepProcessCpuMaxMs: Math.round(Math.max(0, ...lateProcess)),
        longest,
      };
    },
  };
}

/** A heavy Retain: every item names `entities` entities never seen before. */
export function heavyItems(items: number, entities: number, tag: string) {
  return Array.from({ length: items }, (_, i) => ({
    content: `Meeting note ${tag} ${i}: the team discussed the quarterly roadmap, staffing and budget in detail.`,
    entities: Array.from({ length: entities }, (_, j) => ({
      text: `${tag} Person ${i} ${j} Zq${(i * 7919 + j * 104729).toString(36)}`,
      type: 'PERSON',
    })),
  }));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pct(xs: number[], p: number): number {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))]!;
}

async function runEngine(engine: EngineName, o: Required<IsolationOptions>): Promise<IsolationRow> {
  const statements = engine === 'pglite' ? statementCpu() : null;
  const dir = engine === 'pglite' && o.disk ? mkdtempSync(join(tmpdir(), 'mnemo-isolation-')) : null;
  if (dir) await seedDataDir(dir, 'migrated');
  const t = await testApp(engine, {
    runWorker: true,
    ...(dir && { store: await openStore({ dataDir: dir }) }),
  });
  const server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((r) => server.once('listening', () => r()));
  const addr = server.address();
  const base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  const http = async (method: string, path: string, body?: unknown, token = 'test-admin-token') => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : null;
  };
  const keys: Record<string, string> = {};
  for (const p of ['tenant-a', 'tenant-b']) {
    await http('POST', '/v1/default/projects', { id: p, name: p });
    await http('PATCH', `/v1/default/projects/${p}`, {
      limits: { requests_per_minute: null, retained_items_per_day: null, stored_memories: null },
    }).catch(() => undefined);
    keys[p] = (
      await http('POST', `/v1/default/projects/${p}/keys`, { name: 'k', scopes: ['retain', 'recall'] })
    ).key;
  }
  const A = (path: string, body?: unknown, method = 'POST') =>
    http(method, `/v1/me/banks/a${path}`, body, keys['tenant-a']);
  const B = (path: string, body?: unknown, method = 'POST') =>
    http(method, `/v1/me/banks/b${path}`, body, keys['tenant-b']);
  const pending = async (token: string, bank: string) => {
    let n = 0;
    for (const status of ['pending', 'processing']) {
      const r = await http(
        'GET',
        `/v1/me/banks/${bank}/operations?status=${status}&limit=100`,
        undefined,
        token,
      ).catch(() => ({ items: [] }));
      n += r.items.length;
    }
    return n;
  };
  await B('/memories', {
    items: Array.from({ length: 20 }, (_, i) => ({
      content: `Bob note ${i}: Bob likes hiking in the Alps and tea number ${i}.`,
    })),
  });
  while ((await pending(keys['tenant-b']!, 'b')) > 0) await sleep(50);

  const loop = monitorEventLoopDelay({ resolution: 5 });
  const started = performance.now();
  const deadline = started + o.seconds * 1000;
  const health: number[] = [];
  const recall: number[] = [];
  let stop = false;
  const probe = (async () => {
    while (!stop && performance.now() < deadline) {
      let t0 = performance.now();
      await fetch(`${base}/health`).then((r) => r.text());
      health.push(performance.now() - t0);
      t0 = performance.now();
      await B('/memories/recall', { query: 'What does Bob like?' });
      recall.push(performance.now() - t0);
      await sleep(50);
    }
  })();
  loop.enable();
  const steps = stepCpu(statements?.explain);
  statements?.begin();
  let aDone: number | string = 'timeout';
  let bAsync: number | string = 'timeout';
  let backlogThen = '?';
  let queued = false;
  const heavy = (async () => {
    await sleep(200);
    await A('/memories', { items: heavyItems(o.items, o.entities, 'sync') });
    await A('/memories', { items: heavyItems(o.items, o.entities, 'async'), async: true });
    queued = true;
    while (performance.now() < deadline) {
      if ((await pending(keys['tenant-a']!, 'a')) === 0) {
        aDone = Math.round(performance.now() - started);
        return;
      }
      await sleep(200);
    }
  })();
  const small = (async () => {
    // B's own async Retain, sent once A's heavy request path is over and its backlog is queued.
    while (!queued && performance.now() < deadline) await sleep(50);
    const t0 = performance.now();
    const op = await B('/memories', { items: [{ content: 'Bob moved to Lisbon in May.' }], async: true });
    for (;;) {
      const r = await http(
        'GET',
        `/v1/me/banks/b/operations/${op.operation_id}`,
        undefined,
        keys['tenant-b'],
      );
      if (r.status === 'completed') {
        bAsync = Math.round(performance.now() - t0);
        backlogThen = String(await pending(keys['tenant-a']!, 'a'));
        return;
      }
      if (performance.now() > deadline) return;
      await sleep(50);
    }
  })();
  await Promise.all([heavy, small]);
  stop = true;
  await probe;
  loop.disable();
  const { longest, ...cpu } = steps.stop();
  const st = statements?.stop();
  for (const w of st?.worst ?? []) o.log(`${w.cpuMs} ms CPU: ${w.sql}`);
  for (const l of longest) o.log(`step of ${l.cpuMs} ms CPU: ${l.what}`);
  server.close();
  await t.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  const all = [...health, ...recall];
  const ms = (x: number) => Math.round(x);
  return {
    engine: dir ? `${engine} (disk)` : engine,
    workload: `${o.items}x${o.entities}`,
    bProbes: all.length,
    bWorstMs: ms(Math.max(0, ...all)),
    bP99Ms: ms(pct(all, 0.99)),
    healthWorstMs: ms(Math.max(0, ...health)),
    recallWorstMs: ms(Math.max(0, ...recall)),
    bAsyncRetainMs: bAsync,
    aBacklogLeftThen: backlogThen,
    aDoneMs: aDone,
    loopMaxMs: ms(loop.max / 1e6),
    loopP99Ms: ms(loop.percentile(99) / 1e6),
    ...cpu,
    ...(st && {
      statements: st.statements,
      statementsOver30Ms: st.over30Ms,
      statementsOver50Ms: st.over50Ms,
      statementsOver50MsProcess: st.over50MsProcess,
      gcOver50Ms: st.gcOver50Ms,
      gcMaxMs: st.gcMaxMs,
    }),
  };
}

export async function benchIsolation(opts: IsolationOptions = {}): Promise<IsolationRow[]> {
  const o: Required<IsolationOptions> = {
    engines: opts.engines ?? ENGINES,
    items: opts.items ?? 200,
    entities: opts.entities ?? 100,
    seconds: opts.seconds ?? 120,
    disk: opts.disk ?? false,
    log: opts.log ?? ((l) => process.stderr.write(`  ${l}\n`)),
  };
  const rows: IsolationRow[] = [];
  for (const engine of o.engines) {
    o.log(`isolation on ${engine}: ${o.items} items x ${o.entities} entities`);
    rows.push(await runEngine(engine, o));
  }
  return rows;
}

/** A Retain body of about `mb` MB of one shape: what makes reading and checking it costly. */
export function bigRetainBody(shape: 'entities' | 'content' | 'metadata', mb = 10): string {
  const target = mb * 1e6;
  if (shape === 'content') {
    const per = Math.ceil(target / 1000);
    return JSON.stringify({
      items: Array.from({ length: 1000 }, (_, i) => ({
        content: `note ${i} `.repeat(per / 8).slice(0, per),
      })),
    });
  }
  if (shape === 'metadata') {
    // One item whose metadata has a member per ~20 bytes (refused by validation: over 64 KB).
    const members = Math.floor(target / 20);
    const metadata = Object.fromEntries(Array.from({ length: members }, (_, i) => [`key${i}`, i]));
    return JSON.stringify({ items: [{ content: 'x', metadata }] });
  }
  const perEntity = Math.ceil(target / 100_000) - 26;
  return JSON.stringify({
    items: Array.from({ length: 1000 }, (_, i) => ({
      content: `Meeting note ${i}`,
      entities: Array.from({ length: 100 }, (_, j) => ({
        text: `P${i} ${j} `.padEnd(perEntity, 'x'),
        type: 'PERSON',
      })),
    })),
  });
}

export interface BodyRow {
  engine: string;
  body: string;
  mb: number;
  status: number;
  /** CPU of the main thread's longest run without a 5 ms tick, while the body was sent, read, checked and validated. */
  stepCpuMaxMs: number;
  stepsOver50Ms: number;
}

/**
 * Issue 18's body case: 10 MB Retain bodies sent over HTTP to a project whose daily item quota
 * refuses them (429) as soon as the handler runs, so that all the request does is read, check,
 * parse and validate its body. Prints the longest synchronous step of the server's event loop.
 * Run: `npx tsx bench/isolation.ts --bodies [--mb 10]`.
 */
export async function benchBodies(
  opts: { engines?: EngineName[]; mb?: number; log?: (l: string) => void } = {},
) {
  const rows: BodyRow[] = [];
  for (const engine of opts.engines ?? ['pglite' as EngineName]) {
    const t = await testApp(engine);
    const server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((r) => server.once('listening', () => r()));
    const addr = server.address();
    const base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    const call = (method: string, path: string, body: string, token = 'test-admin-token') =>
      fetch(base + path, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
      });
    await call('POST', '/v1/default/projects', JSON.stringify({ id: 'bodies', name: 'bodies' }));
    await call(
      'PATCH',
      '/v1/default/projects/bodies',
      JSON.stringify({ limits: { retained_items_per_day: 1 } }),
    );
    const key = (
      await (
        await call(
          'POST',
          '/v1/default/projects/bodies/keys',
          JSON.stringify({ name: 'k', scopes: ['retain'] }),
        )
      ).json()
    ).key;
    // The floor: the same body sent to a path that never reads it (the client in this process
    // writing it, the server receiving it).
    for (const shape of ['entities', 'content', 'metadata', 'unread'] as const) {
      const body = bigRetainBody(shape === 'unread' ? 'entities' : shape, opts.mb ?? 10);
      const steps = stepCpu();
      const res = await call('POST', shape === 'unread' ? '/unread' : '/v1/me/banks/b/memories', body, key);
      await res.text();
      const cpu = steps.stop();
      rows.push({
        engine,
        body: shape,
        mb: Math.round(Buffer.byteLength(body) / 1e5) / 10,
        status: res.status,
        stepCpuMaxMs: cpu.stepCpuMaxMs,
        stepsOver50Ms: cpu.stepsOver50Ms,
      });
    }
    server.close();
    await t.close();
  }
  return rows;
}

export function isolationArgs(argv: string[]): IsolationOptions {
  const num = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? Number(argv[i + 1]) : undefined;
  };
  const engine = argv.find((a) => a.startsWith('--engine='))?.slice('--engine='.length);
  return {
    items: num('--items'),
    entities: num('--entities'),
    seconds: num('--seconds'),
    disk: argv.includes('--disk'),
    ...(engine && { engines: [engine as EngineName] }),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const argv = process.argv.slice(2);
  if (argv.includes('--bodies')) {
    const mb = argv.indexOf('--mb');
    console.table(await benchBodies({ ...(mb >= 0 && { mb: Number(argv[mb + 1]) }) }));
  } else console.table(await benchIsolation(isolationArgs(argv)));
}
