/**
 * The temporal channel reads a number of rows bounded by its limit, not by the rows in the
 * window: on PostgreSQL, a window over a whole bank of thousands of memories is answered through
 * the time indexes (no sequential scan of memories) reading a few dozen rows, with the same scores
 * as scoring every row of the window. Both engines: the same hits as that full scoring.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Db } from '../../src/store/db.js';
import type { Store } from '../../src/store/store.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import { newMemory } from '../helpers/memory.js';
import { watchedStore } from '../helpers/watched-store.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2024, 0, 1);
const SIZE = 3000;
const LIMIT = 10;

/** Every row of the window scored, as temporal search scores them: the reference. */
const FULL_SCAN = `WITH w AS (SELECT $3::timestamptz AS ws, $4::timestamptz AS we,
    $3::timestamptz + ($4::timestamptz - $3::timestamptz) / 2 AS mid,
    greatest(extract(epoch FROM $4::timestamptz - $3::timestamptz) / 2, 1) AS half),
  c AS (SELECT m.id, m.seq, least(
      CASE WHEN m.occurred_start < w.we AND coalesce(m.occurred_end, m.occurred_start) >= w.ws THEN
        CASE WHEN m.occurred_start <= w.mid AND coalesce(m.occurred_end, m.occurred_start) >= w.mid THEN 0
          ELSE least(abs(extract(epoch FROM m.occurred_start - w.mid)),
                     abs(extract(epoch FROM coalesce(m.occurred_end, m.occurred_start) - w.mid))) END END,
      CASE WHEN m.mentioned_at >= w.ws AND m.mentioned_at < w.we
        THEN abs(extract(epoch FROM m.mentioned_at - w.mid)) END) / w.half AS d
    FROM memories m CROSS JOIN w WHERE m.project_id = 'default' AND m.bank_id = $1)
  SELECT (1 - 0.5 * least(d, 1))::float8 AS score FROM c WHERE d IS NOT NULL ORDER BY d, seq DESC LIMIT $2`;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  /** Rows a scan read and its filter then dropped (per loop). */
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

/** Memories said every 2 hours over 250 days; occurred spans of a day, a week, a month or a year. */
async function fill(store: Store, bank: string) {
  await store.ensureBank('default', bank, {});
  const spans = [0, DAY, 7 * DAY, 30 * DAY, 365 * DAY];
  for (let from = 0; from < SIZE; from += 500) {
    const batch = Array.from({ length: 500 }, (_, k) => {
      const i = from + k;
      const said = new Date(T0 + i * 2 * 3_600_000);
      const span = spans[i % spans.length]!;
      const start = new Date(said.getTime() - DAY - (i % 7) * DAY);
      return newMemory({
        text: `m${i}`,
        embedding: new Float32Array([1, i % 10, 0]),
        terms: new Map([[`t${i}`, 1]]),
        mentioned_at: said,
        occurred_start: i % 3 === 0 ? null : start,
        occurred_end: i % 3 === 0 ? null : new Date(start.getTime() + span),
      });
    });
    await store.insertMemories('default', bank, batch);
  }
}

for (const engine of ENGINES) {
  describe(`temporal search reads what its limit needs (${engine})`, () => {
    let db: Db;
    let dispose: () => Promise<void>;
    let store: Store;
    /** The temporal statement and its parameters, as last run. */
    let last: { sql: string; params: unknown[] } | null = null;
    before(async () => {
      ({ db, dispose } = await openTestDb(engine));
      store = watchedStore(db, (sql, params) => {
        if (sql.includes('inside AS')) last = { sql, params };
      });
      await fill(store, 'big');
      await fill(store, 'other');
      await db.exec('ANALYZE');
    });
    after(() => dispose());

    const windows = [
      { name: 'the whole bank', start: new Date(T0 - 400 * DAY), end: new Date(T0 + 400 * DAY) },
      { name: 'a month', start: new Date(T0 + 60 * DAY), end: new Date(T0 + 90 * DAY) },
      { name: 'a day', start: new Date(T0 + 100 * DAY), end: new Date(T0 + 101 * DAY) },
      { name: 'before everything', start: new Date(T0 - 900 * DAY), end: new Date(T0 - 800 * DAY) },
      // Later than every long span's end, though all of them start before its middle.
      { name: 'after everything', start: new Date(T0 + 900 * DAY), end: new Date(T0 + 1000 * DAY) },
    ];
    for (const w of windows) {
      test(`${w.name}: the scores of scoring every row of the window`, async () => {
        const hits = await store.temporalSearch('default', 'big', w, {}, LIMIT);
        const want = await db.query<{ score: number }>(FULL_SCAN, ['big', LIMIT, w.start, w.end]);
        assert.deepEqual(
          hits.map((h) => h.score),
          want.map((r) => r.score),
        );
      });
    }

    /** Rows of memories the last temporal statement read, and its plan's text; after no sequential scan. */
    const rowsRead = async () => {
      assert.ok(last, 'the temporal statement ran');
      const { sql, params } = last;
      const [row] = await db.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
        params,
      );
      const all = nodes(row!['QUERY PLAN'][0]!.Plan);
      const scans = all.filter((n) => n['Relation Name'] === 'memories');
      assert.ok(scans.length > 0);
      const plan = (await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params))
        .map((r) => r['QUERY PLAN'])
        .join('\n');
      assert.deepEqual(
        scans.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Node Type']),
        [],
        `memories only through indexes:\n${plan}`,
      );
      const read = scans.reduce(
        (a, n) => a + (n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0)) * n['Actual Loops'],
        0,
      );
      return { read, plan };
    };

    // Plans are checked on PostgreSQL, where deployments that grow to a million memories run.
    if (engine === 'postgres') {
      test('a window over the whole bank reads a few dozen rows through indexes', async () => {
        await store.temporalSearch('default', 'big', windows[0]!, {}, LIMIT);
        const { read } = await rowsRead();
        // Six parts of at most LIMIT rows each (ties of one time may add a few); the spans over the
        // middle read at most ten rows per hit before their filter.
        assert.ok(read <= 16 * LIMIT, `read ${read} rows of a window holding ${SIZE}`);
      });

      test('a window after every long span reads none of them', async () => {
        // 400 spans of a year, all starting before the window's middle and ending before it:
        // found by their start, each was read to test its end.
        await store.temporalSearch('default', 'big', windows[4]!, {}, LIMIT);
        const { read, plan } = await rowsRead();
        assert.ok(read <= 16 * LIMIT, `read ${read} rows for a window past every memory:\n${plan}`);
      });
    }
  });
}
