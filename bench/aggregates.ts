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
  await db.exec(`
    INSERT INTO banks (project_id, id, memory_count) VALUES ('${P}', '${BANK}', ${n});
    INSERT INTO memories (project_id, bank_id, id, type, text, content_hash, state, tags, created_at, mentioned_at)
      SELECT '${P}', '${BANK}', md5('m' || i)::uuid,
             CASE WHEN i % 4 = 0 THEN 'experience' WHEN i % 10 = 1 THEN 'observation' ELSE 'world' END,
             'memory ' || i, md5(i::text), CASE WHEN i % 23 = 0 THEN 'invalidated' ELSE 'valid' END,
             CASE WHEN i % 5 = 0 THEN ARRAY['Apple', 'tag-' || (i % 40)]
                  WHEN i % 5 = 1 THEN ARRAY['tag-' || (i % 40), 'apple', 'é' || (i % 3), '文']
                  ELSE ARRAY['tag-' || (i % 7)] END,
             now() - (i % 150) * interval '1 hour' - (i % 7) * interval '1 minute',
             CASE WHEN i % 3 = 0 THEN now() - (i % 9) * interval '1 day' END
        FROM generate_series(1, ${n}) i;
    INSERT INTO observations (project_id, bank_id, id, writer)
      SELECT '${P}', '${BANK}', md5('m' || i)::uuid, 'consolidation' FROM generate_series(1, ${n}) i WHERE i % 20 = 1;
    INSERT INTO observation_sources (project_id, bank_id, observation_id, memory_id, relation)
      SELECT '${P}', '${BANK}', md5('m' || i)::uuid, md5('m' || (i + j))::uuid,
             CASE WHEN j = 3 THEN 'contradicts' ELSE 'supports' END
        FROM generate_series(1, ${n} - 10) i, generate_series(1, 3) j WHERE i % 20 = 1;
    INSERT INTO consolidation_state (project_id, bank_id, last_seq)
      SELECT '${P}', '${BANK}', (SELECT min(seq) + ${Math.floor(n / 2)} FROM memories WHERE bank_id = '${BANK}');
    INSERT INTO documents (project_id, bank_id, id, content_hash)
      SELECT '${P}', '${BANK}', 'd-' || i, md5(i::text) FROM generate_series(1, ${n}) i;
    ALTER TABLE entities DISABLE TRIGGER entities_keys_inserted;
    INSERT INTO entities (project_id, bank_id, id, name, name_key, type, mention_count)
      SELECT '${P}', '${BANK}', md5('e' || i)::uuid, 'E' || i, 'e' || i, 'person', 1 FROM generate_series(0, 60) i;
    ALTER TABLE entities ENABLE TRIGGER entities_keys_inserted;
    INSERT INTO memory_entities (project_id, bank_id, memory_id, entity_id)
      SELECT DISTINCT '${P}', '${BANK}', md5('m' || i)::uuid, md5('e' || e)::uuid
        FROM generate_series(1, ${n}) i, LATERAL (VALUES (0), (1 + i % 50), (51 + i % 10)) x(e);
    ANALYZE;
  `);
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
