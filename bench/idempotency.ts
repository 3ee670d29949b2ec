/**
 * What an `Idempotency-Key` costs per write: the same request without a key, with a fresh key
 * each time (claim, then keep the answer), and replayed (the same key again), for a cheap write
 * (create a space), a one-item Retain into a plain bank and into an encrypted bank (where the
 * kept answer is sealed with the bank's data key). In-process app, operator token, no HTTP socket.
 * Engines: PGlite in memory, and PostgreSQL when MNEMO_TEST_DATABASE_URL is set.
 * Run: `npx tsx bench/idempotency.ts [requests per row, default 300]`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createApp } from '../src/api/app.js';
import { createLogger } from '../src/api/logger.js';
import { loadConfig } from '../src/config/load.js';
import { compose } from '../src/runtime/compose.js';
import { createTestDatabase, type EngineName, openTestStore } from '../test/helpers/engines.js';

const N = Number(process.argv[2] ?? 300);
const ADMIN = 'bench-admin';

interface Row {
  engine: string;
  what: string;
  n: number;
  meanUs: number;
  p50Us: number;
  p99Us: number;
}

async function measure(n: number, fn: (i: number) => Promise<unknown>) {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn(i);
    times.push((performance.now() - t) * 1000);
  }
  times.sort((a, b) => a - b);
  const pct = (p: number) => Math.round(times[Math.min(times.length - 1, Math.floor(times.length * p))]!);
  return { n, meanUs: Math.round(times.reduce((a, b) => a + b, 0) / n), p50Us: pct(0.5), p99Us: pct(0.99) };
}

async function benchEngine(engine: EngineName): Promise<Row[]> {
  const store = await openTestStore(engine);
  const rows: Row[] = [];
  const masterKey = randomBytes(32).toString('base64');
  const config = loadConfig({ adminToken: ADMIN, logLevel: 'silent', masterKey }, {});
  const runtime = await compose(config, { store });
  const { services } = runtime;
  const app = createApp(runtime, createLogger('silent'));
  const call = async (method: string, path: string, body: unknown, key?: string) => {
    const headers: Record<string, string> = {
      authorization: `Bearer ${ADMIN}`,
      'content-type': 'application/json',
    };
    if (key) headers['idempotency-key'] = key;
    const res = await app.request(path, { method, headers, body: JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res;
  };
  try {
    await call('PUT', '/v1/default/banks/plain', {});
    await call('PUT', '/v1/default/banks/vault', {});
    await call('PATCH', '/v1/default/banks/vault/config', { updates: { encryption: 'managed' } });
    const cases: [string, (i: number, key?: string) => Promise<unknown>][] = [
      [
        'create space',
        (i, key) => call('POST', '/v1/default/spaces', { id: `s${key ?? 'n'}${i}`, name: 'x' }, key),
      ],
      [
        'Retain 1 item, plain bank',
        (i, key) =>
          call('POST', '/v1/default/banks/plain/memories', { items: [{ content: `fact ${i}` }] }, key),
      ],
      [
        'Retain 1 item, encrypted bank',
        (i, key) =>
          call('POST', '/v1/default/banks/vault/memories', { items: [{ content: `fact ${i}` }] }, key),
      ],
    ];
    // The statements alone, as a keyed write runs them: claim, then keep the answer.
    const reply = { success: true, memories_created: 1, memory_ids: [randomUUID()] };
    for (const [what, bankId] of [
      ['store: claim + keep, no bank', null],
      ['store: claim + keep, plain bank', 'plain'],
      ['store: claim + keep (sealed), encrypted bank', 'vault'],
    ] as const) {
      const prefix = randomUUID().slice(0, 8);
      const once = async (i: number) => {
        const scope = { projectId: 'default', caller: 'operator', key: `${prefix}-${i}` };
        await services.store.claimIdempotencyKey(scope, 'h', 600_000);
        await services.store.saveIdempotentResponse(scope, {
          status: 200,
          response: reply,
          withheld: false,
          bankId,
        });
      };
      await measure(50, (i) => once(1e6 + i));
      rows.push({ engine, what, ...(await measure(N, once)) });
    }
    for (const [what, run] of cases) {
      await measure(30, (i) => run(1e6 + i)); // warm-up
      const prefix = randomUUID().slice(0, 8);
      // Alternating blocks, so that drift of a noisy machine hits both sides alike.
      const block = Math.max(10, Math.floor(N / 5));
      const stats = { none: [] as Row[], fresh: [] as Row[] };
      for (let b = 0; b < N / block; b++) {
        const a = await measure(block, (i) => run(b * block + i));
        const k = await measure(block, (i) => run(b * block + i, `${prefix}-${b}-${i}`));
        stats.none.push({ engine, what, ...a });
        stats.fresh.push({ engine, what, ...k });
      }
      const merge = (label: string, rs: Row[]): Row => ({
        engine,
        what: `${what}: ${label}`,
        n: rs.reduce((s, r) => s + r.n, 0),
        meanUs: Math.round(rs.reduce((s, r) => s + r.meanUs * r.n, 0) / rs.reduce((s, r) => s + r.n, 0)),
        p50Us: Math.round(rs.map((r) => r.p50Us).sort((x, y) => x - y)[Math.floor(rs.length / 2)]!),
        p99Us: Math.max(...rs.map((r) => r.p99Us)),
      });
      rows.push(merge('no key', stats.none), merge('fresh key', stats.fresh));
      const replayKey = `${prefix}-replay`;
      await run(0, replayKey);
      rows.push({ engine, what: `${what}: replayed`, ...(await measure(block, () => run(0, replayKey))) });
    }
  } finally {
    await store.dispose();
  }
  return rows;
}

const engines: EngineName[] = process.env.MNEMO_TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
if (process.env.MNEMO_TEST_DATABASE_URL) await (await createTestDatabase()).drop();
const all: Row[] = [];
for (const engine of engines) all.push(...(await benchEngine(engine)));

const header = ['engine', 'what', 'n', 'mean µs', 'p50 µs', 'p99 µs'];
const lines = all.map((r) => [r.engine, r.what, r.n, r.meanUs, r.p50Us, r.p99Us].map(String));
const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
const fmt = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
process.stdout.write(
  `${[fmt(header), fmt(widths.map((w) => '-'.repeat(w))), ...lines.map(fmt)].join('\n')}\n`,
);
