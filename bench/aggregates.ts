/**
 * Whole-bank aggregates walked in bounded hops (issue 18), on both engines over the same bank:
 * `--memories` (default 12,000) memories with 1 to 4 tags each, a hub entity mentioned by every
 * memory and two others each, observations and their sources, as many documents (the bank of
 * test/security/aggregates.slow.test.ts). For bank stats, the memory time series, the tag listing,
 * the entity graph, a filtered memory page (a tag no memory carries: the whole bank walked) and a
 * filtered total, the median of `--runs` (default 5) of: wall ms in all, CPU ms (this process's
 * user + system, PGlite's work included, plus on PostgreSQL its server processes' for the bank's
 * database, read from Linux's /proc: what load on the machine does not inflate), statements sent, the longest statement (wall ms). PostgreSQL runs when MNEMO_TEST_DATABASE_URL is set.
 * Run: `npm run bench -- aggregates [--memories 12000] [--runs 5] [--only stats,graph]`.
 */
import { readFile, readdir } from 'node:fs/promises';
import type { Db, Queryable } from '../src/store/db.js';
import { storeOver } from '../src/store/open.js';
import { seedAggregateBank } from '../test/helpers/aggregate-bank.js';
import { ENGINES, openTestDb } from '../test/helpers/engines.js';

const P = 'default';
const BANK = 'big';

export function aggregateArgs(argv: string[]): { memories: number; runs: number; only?: string[] } {
  const value = (flag: string, dflt: number) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? Number(argv[i + 1]) : dflt;
  };
  const only = argv.indexOf('--only');
  return {
    memories: value('--memories', 12_000),
    runs: value('--runs', 5),
    only: only >= 0 ? argv[only + 1]?.split(',') : undefined,
  };
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

/**
 * CPU ms spent so far by the PostgreSQL server processes of database `name` (Linux `/proc`, the
 * server on this machine); 0 where that cannot be read.
 */
async function serverCpu(name: string): Promise<number> {
  let ticks = 0;
  try {
    for (const pid of await readdir('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8');
        if (!cmd.startsWith('postgres: ') || !cmd.includes(` ${name} `)) continue;
        const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        ticks += Number(f[11]) + Number(f[12]); // utime, stime
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    return 0;
  }
  return ticks * 10; // USER_HZ is 100 on Linux
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchAggregates(o: {
  memories: number;
  runs: number;
  only?: string[];
}): Promise<Record<string, string | number>[]> {
  const rows: Record<string, string | number>[] = [];
  for (const engine of ENGINES) {
    const { db, dispose } = await openTestDb(engine);
    try {
      await seed(db, o.memories);
      const [{ name }] = (await db.query<{ name: string }>('SELECT current_database() AS name')) as [
        { name: string },
      ];
      const server = () => (engine === 'postgres' ? serverCpu(name) : Promise.resolve(0));
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
        if (o.only && !o.only.includes(name)) continue;
        await run(); // warm: the page cache, and the statements' plans
        const runs: { all: number; cpu: number; statements: number; longest: number }[] = [];
        for (let i = 0; i < o.runs; i++) {
          times.length = 0;
          const s0 = await server();
          const t0 = performance.now();
          const c0 = process.cpuUsage();
          await run();
          const c = process.cpuUsage(c0);
          const all = performance.now() - t0;
          const s1 = await server();
          runs.push({
            all,
            cpu: (c.user + c.system) / 1000 + s1 - s0,
            statements: times.length,
            longest: Math.max(...times),
          });
        }
        rows.push({
          engine,
          aggregate: name,
          'ms in all': Math.round(median(runs.map((r) => r.all))),
          'cpu ms': Math.round(median(runs.map((r) => r.cpu))),
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
