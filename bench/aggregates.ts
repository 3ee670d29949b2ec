/**
 * Whole-bank aggregates walked in bounded hops (issue 18), on both engines over the same bank:
 * `--memories` (default 12,000) memories with 1 to 4 tags each, a hub entity mentioned by every
 * memory and two others each, observations and their sources, as many documents (the bank of
 * test/security/aggregates.slow.test.ts). For bank stats, the memory time series, the tag listing,
 * the entity graph, a filtered memory page (a tag no memory carries: the whole bank walked) and a
 * filtered total, the median of `--runs` (default 5) of: wall ms in all, statements sent, the
 * longest statement (wall ms). PostgreSQL runs when MNEMO_TEST_DATABASE_URL is set.
 * Run: `npm run bench -- aggregates [--memories 12000] [--runs 5]`.
 */
import type { Db, Queryable } from '../src/store/db.js';
import { storeOver } from '../src/store/open.js';
import { seedAggregateBank } from '../test/helpers/aggregate-bank.js';
import { ENGINES, openTestDb } from '../test/helpers/engines.js';

const P = 'default';
const BANK = 'big';

export function aggregateArgs(argv: string[]): { memories: number; runs: number } {
  const value = (flag: string, dflt: number) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? Number(argv[i + 1]) : dflt;
  };
  return { memories: value('--memories', 12_000), runs: value('--runs', 5) };
}

async function seed(db: Db, n: number) {
  await db.exec(`INSERT INTO banks (project_id, id, memory_count) VALUES ('${P}', '${BANK}', ${n})`);
  await seedAggregateBank(db, P, BANK, n);
}

/** `db` with each statement's wall time added to `times`. */
function timed(db: Db, times: number[]): Db {
  const time = (q: Queryable): Queryable => ({
    exec: (sql) => q.exec(sql),
    query: async (sql, params) => {
      const t0 = performance.now();
      try {
        return await q.query(sql, params);
      } finally {
        times.push(performance.now() - t0);
      }
    },
  });
  return {
    ...db,
    engine: db.engine,
    ...time(db),
    transaction: (fn, mode) => db.transaction((tx) => fn(time(tx)), mode),
    ping: db.ping.bind(db),
    close: db.close.bind(db),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchAggregates(o: {
  memories: number;
  runs: number;
}): Promise<Record<string, string | number>[]> {
  const rows: Record<string, string | number>[] = [];
  for (const engine of ENGINES) {
    const { db, dispose } = await openTestDb(engine);
    try {
      await seed(db, o.memories);
      const times: number[] = [];
      const store = storeOver(timed(db, times));
      const day = 86_400;
      const now = Math.floor(Date.now() / 1000 / day) * day;
      const cases: Record<string, () => Promise<unknown>> = {
        stats: () => store.bankStats(P, BANK),
        'time series': () =>
          store.memoryTimeseries(P, BANK, {
            field: 'created_at',
            from: new Date((now - 6 * day) * 1000),
            to: new Date((now + day) * 1000),
            stepSeconds: day,
          }),
        tags: () => store.tagCounts(P, BANK, { limit: 100, offset: 0 }),
        graph: () => store.entityCooccurrences(P, BANK, { minCount: 1, limit: 1000 }),
        'filtered page': () => store.listMemories(P, BANK, { tags: ['none'] }, { limit: 50, offset: 0 }),
        'filtered total': () => store.countMemories(P, BANK, { tags: ['apple'] }),
      };
      for (const [name, run] of Object.entries(cases)) {
        await run(); // warm: the page cache, and the statements' plans
        const runs: { all: number; statements: number; longest: number }[] = [];
        for (let i = 0; i < o.runs; i++) {
          times.length = 0;
          const t0 = performance.now();
          await run();
          runs.push({ all: performance.now() - t0, statements: times.length, longest: Math.max(...times) });
        }
        rows.push({
          engine,
          aggregate: name,
          'ms in all': Math.round(median(runs.map((r) => r.all))),
          statements: median(runs.map((r) => r.statements)),
          'longest statement ms': Math.round(median(runs.map((r) => r.longest))),
        });
      }
    } finally {
      await dispose();
    }
  }
  return rows;
}
