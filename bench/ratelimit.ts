/**
 * What rate limiting costs per request: the one counting statement (`countRequest`: read the
 * project's limits and upsert the project's and the key's counters) alone, sequentially and
 * with concurrent callers on the same counter row, the quota statement of a Retain
 * (`chargeItems`), the cost budget charges (`chargeCost`), and a whole keyed request with limits on versus off.
 * Engines: PGlite in memory, and PostgreSQL when MNEMO_TEST_DATABASE_URL is set.
 * Run: `npx tsx bench/ratelimit.ts [statements per row, default 2000]`.
 */
import { createApp } from '../src/api/app.js';
import { compose } from '../src/runtime/compose.js';
import { createLogger } from '../src/api/logger.js';
import { loadConfig } from '../src/config/load.js';
import { chargeCost } from '../src/core/budgets.js';
import { fixedWindow, MINUTE_MS, NO_LIMITS } from '../src/core/quotas.js';
import type { Services } from '../src/core/services.js';
import type { Store } from '../src/store/store.js';
import { createTestDatabase, type EngineName, openTestStore } from '../test/helpers/engines.js';

const N = Number(process.argv[2] ?? 2000);
const ADMIN = 'bench-admin';

interface Row {
  engine: string;
  what: string;
  n: number;
  meanUs: number;
  p50Us: number;
  p99Us: number;
  perSecond: number;
}

/** Runs `fn` n times with `concurrency` callers; latency per call and overall throughput. */
async function measure(n: number, concurrency: number, fn: () => Promise<unknown>) {
  const times: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++;
        const t = performance.now();
        await fn();
        times.push((performance.now() - t) * 1000);
      }
    }),
  );
  const total = performance.now() - started;
  times.sort((a, b) => a - b);
  const pct = (p: number) => Math.round(times[Math.min(times.length - 1, Math.floor(times.length * p))]!);
  return {
    n,
    meanUs: Math.round(times.reduce((a, b) => a + b, 0) / times.length),
    p50Us: pct(0.5),
    p99Us: pct(0.99),
    perSecond: Math.round((n / total) * 1000),
  };
}

async function benchEngine(engine: EngineName): Promise<Row[]> {
  const store: Store & { dispose(): Promise<void> } = await openTestStore(engine);
  const rows: Row[] = [];
  const add = (what: string, r: Omit<Row, 'engine' | 'what'>) => rows.push({ engine, what, ...r });
  try {
    await store.createProject({
      id: 'bench',
      name: 'bench',
      limits: { requests_per_minute: 1e12, requests_per_minute_per_key: 1e12 },
    });
    await store.createProject({ id: 'free', name: 'free' });
    const window = () => fixedWindow(new Date(), MINUTE_MS).start;
    const count = (projectId: string) =>
      store.countRequest({ projectId, keyId: 'benchkey0001', windowStart: window(), defaults: NO_LIMITS });
    await count('bench');
    add('countRequest, no limits (read only)', await measure(N, 1, () => count('free')));
    add('countRequest, project + key limits', await measure(N, 1, () => count('bench')));
    add('countRequest, 16 concurrent, one row', await measure(N, 16, () => count('bench')));
    const charge = () =>
      store.chargeItems({
        projectId: 'bench',
        items: 1,
        windowStart: fixedWindow(new Date(), 86_400_000).start,
        defaults: { retainedItemsPerDay: 1e12, storedMemories: 1e12 },
      });
    add('chargeItems (Retain quotas)', await measure(Math.min(N, 1000), 1, charge));
    // A Retain's cost budgets (items per minute, characters per minute and per day: three rows),
    // as the Retain path charges them, and one model call's check (calls and tokens: four rows).
    const budgets = {
      ...NO_LIMITS,
      budgets: {
        retained_items_per_minute: 1e12,
        characters_per_minute: 1e12,
        characters_per_day: 1e12,
        model_calls_per_minute: 1e12,
        model_calls_per_day: 1e12,
        model_tokens_per_minute: 1e12,
        model_tokens_per_day: 1e12,
      },
    };
    const metered: Services = {
      store,
      embedder: null as never,
      llm: null,
      now: () => new Date(),
      limitDefaults: budgets,
    };
    const retainCost = () => chargeCost(metered, 'free', { retained_items: 10, characters: 5000 }, 'check');
    add('chargeCost, Retain (3 counters)', await measure(Math.min(N, 1000), 1, retainCost));
    add('chargeCost, Retain, 16 concurrent', await measure(Math.min(N, 1000), 16, retainCost));
    add(
      'chargeCost, model call (4 counters)',
      await measure(Math.min(N, 1000), 1, () =>
        chargeCost(metered, 'free', { model_calls: 1, model_tokens: 0 }, 'check'),
      ),
    );
    add(
      'chargeCost, no budget (read only)',
      await measure(Math.min(N, 1000), 1, () =>
        chargeCost(
          { ...metered, limitDefaults: NO_LIMITS },
          'free',
          { retained_items: 10, characters: 5000 },
          'check',
        ),
      ),
    );

    // A whole keyed request (auth reads the key, then the limit statement), limits on and off.
    const config = loadConfig({ adminToken: ADMIN, logLevel: 'silent' }, {});
    const app = createApp(await compose(config, { store }), createLogger('silent'));
    const keyOf = async (project: string) => {
      const res = await app.request(`/v1/default/projects/${project}/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'bench', scopes: ['admin'] }),
      });
      return ((await res.json()) as { key: string }).key;
    };
    for (const [project, label] of [
      ['free', 'GET /v1/me/spaces, no limits'],
      ['bench', 'GET /v1/me/spaces, limits on'],
    ] as const) {
      const key = await keyOf(project);
      const call = async () => {
        const res = await app.request('/v1/me/spaces', { headers: { authorization: `Bearer ${key}` } });
        if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
      };
      await measure(50, 1, call);
      add(label, await measure(Math.min(N, 1000), 1, call));
    }
  } finally {
    await store.dispose();
  }
  return rows;
}

const engines: EngineName[] = process.env.MNEMO_TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
if (process.env.MNEMO_TEST_DATABASE_URL) await (await createTestDatabase()).drop(); // fail early if unreachable
const all: Row[] = [];
for (const engine of engines) all.push(...(await benchEngine(engine)));

const header = ['engine', 'what', 'n', 'mean µs', 'p50 µs', 'p99 µs', 'per second'];
const lines = all.map((r) => [r.engine, r.what, r.n, r.meanUs, r.p50Us, r.p99Us, r.perSecond].map(String));
const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
const fmt = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
process.stdout.write(
  `${[fmt(header), fmt(widths.map((w) => '-'.repeat(w))), ...lines.map(fmt)].join('\n')}\n`,
);
