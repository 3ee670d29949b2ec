/**
 * A bank's whole-bank aggregates read no more than a hop of rows per statement, and are charged
 * (issue 18). Bank stats, the memory time series, the tag listing's groups and total, the entity
 * graph (its pairs and `total_edges`) and the spaces' `bank_count` were each one statement over
 * the whole bank (the graph's a self-join, worse than linear with a hub entity in every memory):
 * on the embedded engine the event loop's only thread held for all of it, uncharged. Over a bank
 * of 12,000 memories (a hub entity in each), each answer equals the old single statement's, no
 * statement reads more than SKIP_PER_STATEMENT rows in any step of its plan (EXPLAIN ANALYZE of
 * the very statement), the event loop turns between two hops, the work is charged to the
 * project's recall units, and a spent budget is a 429 before any hop runs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Db } from '../../src/store/db.js';
import { SKIP_PER_STATEMENT } from '../../src/store/sql/offset-walk.js';
import { seedAggregateBank } from '../helpers/aggregate-bank.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import { recallUnitsSpent, setProjectLimits } from '../helpers/project-usage.js';
import { mostRowsRead, type Sent, turnWatchedStore } from '../helpers/statement-reads.js';

const P = 'default';
const BANK = 'big';
const N = 12_000;
const K = SKIP_PER_STATEMENT;
/** The most rows of one memory in a walk: its 4 tags, its 3 mentions and their pairs. */
const TIES = 8;

async function seed(db: Db) {
  await db.exec(`
    INSERT INTO spaces (project_id, id, name) VALUES ('${P}', 's', 's'), ('${P}', 't', 't'), ('${P}', 'u', 'u');
    INSERT INTO banks (project_id, id, memory_count, space_id) VALUES ('${P}', '${BANK}', ${N}, 's');
    INSERT INTO banks (project_id, id, space_id)
      SELECT '${P}', 'b-' || lpad(i::text, 6, '0'), CASE WHEN i % 3 = 0 THEN 's' WHEN i % 3 = 1 THEN 't' END
        FROM generate_series(1, 300) i;
  `);
  await seedAggregateBank(db, P, BANK, N);
}

// The old single statements, the answers' reference.
const OLD_TYPES = `SELECT type, count(*)::int AS n, max(created_at) AS last FROM memories
  WHERE project_id = $1 AND bank_id = $2 GROUP BY type ORDER BY type`;
const OLD_LINKS = `SELECT m.type AS fact_type, 'entity' AS link_type, count(*)::int AS n
   FROM memory_entities me JOIN memories m
     ON m.project_id = me.project_id AND m.bank_id = me.bank_id AND m.id = me.memory_id
  WHERE me.project_id = $1 AND me.bank_id = $2 GROUP BY m.type
 UNION ALL
 SELECT 'observation' AS fact_type, os.relation AS link_type, count(*)::int AS n
   FROM observation_sources os WHERE os.project_id = $1 AND os.bank_id = $2 GROUP BY os.relation`;
const OLD_SCALARS = `SELECT
   (SELECT count(*)::int FROM documents d WHERE d.project_id = $1 AND d.bank_id = $2) AS documents,
   (SELECT count(*)::int FROM memories m
     WHERE m.project_id = $1 AND m.bank_id = $2
       AND m.seq > coalesce((SELECT c.last_seq FROM consolidation_state c
                              WHERE c.project_id = $1 AND c.bank_id = $2), 0)
       AND NOT EXISTS (SELECT 1 FROM observations o
                        WHERE o.project_id = $1 AND o.bank_id = $2 AND o.id = m.id)) AS pending`;
const oldTags = (match: string) => {
  const from = `FROM memories m CROSS JOIN LATERAL unnest(m.tags) AS t(tag)
    WHERE m.project_id = $1 AND m.bank_id = $2${match}`;
  return {
    items: `SELECT t.tag, count(*)::int AS count ${from}
      GROUP BY t.tag ORDER BY count DESC, t.tag COLLATE "C" LIMIT $LIMIT OFFSET $OFFSET`,
    total: `SELECT count(DISTINCT t.tag)::int AS n ${from}`,
  };
};
const OLD_GRAPH = `SELECT a.entity_id::text AS a, b.entity_id::text AS b, count(*)::int AS count,
        max(coalesce(m.mentioned_at, m.created_at)) AS last, (count(*) OVER ())::int AS total
   FROM memory_entities a
   JOIN memory_entities b
     ON b.project_id = a.project_id AND b.bank_id = a.bank_id AND b.memory_id = a.memory_id
    AND b.entity_id > a.entity_id
   JOIN memories m ON m.project_id = a.project_id AND m.bank_id = a.bank_id AND m.id = a.memory_id
  WHERE a.project_id = $1 AND a.bank_id = $2 AND m.state = 'valid'
  GROUP BY a.entity_id, b.entity_id HAVING count(*) >= $3
  ORDER BY count DESC, a.entity_id, b.entity_id LIMIT $4`;
const OLD_SERIES = (
  at: string,
) => `SELECT floor(extract(epoch FROM ${at}) / $3)::float8 * $3 AS bucket, m.type, count(*)::int AS n
   FROM memories m
  WHERE m.project_id = $1 AND m.bank_id = $2 AND ${at} >= $4 AND ${at} < $5
  GROUP BY 1, 2`;

for (const engine of ENGINES) {
  describe(`whole-bank aggregates read a bounded number of rows per statement (${engine})`, () => {
    let db: Db;
    let t: TestApp;
    const seen: Sent[] = [];

    before(async () => {
      const opened = await openTestDb(engine);
      db = opened.db;
      await seed(db);
      // One minute for the whole file: the charges compared before and after a request stay in
      // one recall-units window however slow the machine (a real clock crossed a minute there).
      const at = new Date();
      t = await testApp(engine, {
        store: Object.assign(turnWatchedStore(db, seen), { dispose: opened.dispose }),
        now: () => at,
      });
    });
    after(() => t?.close());

    const old = <T>(sql: string, params: unknown[] = [P, BANK]) => db.query<T>(sql, params);

    /** Sends `path`, and checks each statement it sent: at most a hop of rows, a turn between hops. */
    async function call(path: string) {
      seen.length = 0;
      const r = await t.call('GET', `/v1/default${path}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const statements = [...seen];
      for (const s of statements) {
        if (!/^\s*(SELECT|WITH)\b/i.test(s.sql)) continue;
        // The bank profile's counts, which the graph's answer carries, are another matter (issue 18).
        if (/\bAS entity_count\b/.test(s.sql)) continue;
        const read = await mostRowsRead(db, s.sql, s.params);
        // A hop reads K rows, and those tied with the last hop's on the first key of its order (the
        // other tags, mentions or pairs of the memory it ended in; a handful here).
        assert.ok(read <= K + TIES, `${path}: a statement reads ${read} rows:\n${s.sql}`);
      }
      const hops = statements.filter((s) => /\bhop\b/.test(s.sql));
      assert.ok(hops.length > 1, `${path}: walked in hops`);
      assert.ok(
        hops.slice(1).every((s) => s.turned),
        `${path}: two statements of a walk without a turn of the event loop`,
      );
      return r.body;
    }

    test('bank stats equal the old statements', async () => {
      const body = await call(`/banks/${BANK}/stats`);
      const types = await old<{ type: string; n: number; last: Date }>(OLD_TYPES);
      assert.deepEqual(body.nodes_by_fact_type, Object.fromEntries(types.map((r) => [r.type, r.n])));
      const last = new Date(Math.max(...types.map((r) => r.last.getTime())));
      assert.equal(new Date(body.last_memory_write_at).getTime(), last.getTime());
      const links = await old<{ fact_type: string; link_type: string; n: number }>(OLD_LINKS);
      const breakdown: Record<string, Record<string, number>> = {};
      for (const l of links) breakdown[l.fact_type] = { ...breakdown[l.fact_type], [l.link_type]: l.n };
      assert.deepEqual(body.links_breakdown, breakdown);
      assert.equal(
        body.total_links,
        links.reduce((a, l) => a + l.n, 0),
      );
      const [scalars] = await old<{ documents: number; pending: number }>(OLD_SCALARS);
      assert.equal(body.total_documents, scalars!.documents);
      assert.equal(body.pending_consolidation, scalars!.pending);
      assert.ok(scalars!.pending > 0 && scalars!.pending < N);
    });

    test('the memory time series equals the old statement', async () => {
      for (const field of ['created_at', 'mentioned_at'] as const) {
        const body = await call(`/banks/${BANK}/stats/memories-timeseries?period=7d&time_field=${field}`);
        const at = field === 'created_at' ? 'm.created_at' : 'coalesce(m.mentioned_at, m.created_at)';
        const first = new Date(body.buckets[0].time);
        const step = new Date(body.buckets[1].time).getTime() - first.getTime();
        const to = new Date(new Date(body.buckets.at(-1).time).getTime() + step);
        const rows = await old<{ bucket: number; type: string; n: number }>(OLD_SERIES(at), [
          P,
          BANK,
          step / 1000,
          first,
          to,
        ]);
        const want = new Map<string, number>();
        for (const r of rows) want.set(`${Number(r.bucket) * 1000}/${r.type}`, r.n);
        const got = new Map<string, number>();
        for (const b of body.buckets)
          for (const [type, n] of Object.entries(b))
            if (type !== 'time' && n) got.set(`${new Date(b.time).getTime()}/${type}`, n as number);
        assert.deepEqual(got, want, field);
        assert.ok(want.size > 10);
      }
    });

    test('the tag listing equals the old statements, ties and filters', async () => {
      for (const [query, match, like] of [
        ['', '', undefined],
        ['&q=apple', ' AND t.tag ILIKE $3', 'apple'],
        ['&q=tag-1*', ' AND t.tag ILIKE $3', 'tag-1%'],
      ] as const) {
        for (const [limit, offset] of [
          [10, 0],
          [5, 3],
          [100, 40],
        ]) {
          const body = await call(`/banks/${BANK}/tags?limit=${limit}&offset=${offset}${query}`);
          const sql = oldTags(match);
          const params: unknown[] = like === undefined ? [P, BANK] : [P, BANK, like];
          const n = params.length;
          const items = await old<{ tag: string; count: number }>(
            sql.items.replace('$LIMIT', `$${n + 1}`).replace('$OFFSET', `$${n + 2}`),
            [...params, limit, offset],
          );
          const [total] = await old<{ n: number }>(sql.total, params);
          assert.deepEqual(body.items, items, `tags ${query} ${limit}/${offset}`);
          assert.equal(body.total, total!.n);
        }
      }
    });

    test("the entity graph's pairs and total_edges equal the old statement (a hub in every memory)", async () => {
      for (const [minCount, limit] of [
        [1, 1000],
        [30, 7],
        [200, 1000],
      ]) {
        const body = await call(`/banks/${BANK}/entities/graph?min_count=${minCount}&limit=${limit}`);
        const rows = await old<{ a: string; b: string; count: number; last: Date; total: number }>(
          OLD_GRAPH,
          [P, BANK, minCount, limit],
        );
        assert.deepEqual(
          body.edges.map((e: { data: { source: string; target: string; weight: number } }) => [
            e.data.source,
            e.data.target,
            e.data.weight,
          ]),
          rows.map((r) => [r.a, r.b, r.count]),
        );
        assert.deepEqual(
          body.edges.map((e: { data: { lastCooccurred: string } }) =>
            new Date(e.data.lastCooccurred).getTime(),
          ),
          rows.map((r) => r.last.getTime()),
        );
        assert.equal(body.total_edges, rows[0]?.total ?? 0, `min_count ${minCount}`);
      }
    });

    test("the spaces' bank counts equal the old statement", async () => {
      seen.length = 0;
      const r = await t.call('GET', '/v1/default/spaces');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const want = await old<{ id: string; bank_count: number }>(
        `SELECT s.id, (SELECT count(*)::int FROM banks b WHERE b.project_id = s.project_id AND b.space_id = s.id) AS bank_count
           FROM spaces s WHERE s.project_id = $1 AND length($2) > 0 ORDER BY s.created_at, s.id`,
      );
      assert.deepEqual(
        r.body.items.map((s: { id: string; bank_count: number }) => ({ id: s.id, bank_count: s.bank_count })),
        want,
      );
      for (const s of seen) {
        if (!/^\s*(SELECT|WITH)\b/i.test(s.sql)) continue;
        const read = await mostRowsRead(db, s.sql, s.params);
        assert.ok(read <= K + 1, `spaces: a statement reads ${read} rows:\n${s.sql}`);
      }
    });

    test('the aggregates are charged in recall units before they run; a spent budget is a 429', async () => {
      const used = () => recallUnitsSpent(t, P);
      const setLimit = (n: number | null) => setProjectLimits(t, P, { recall_units_per_minute: n });
      await setLimit(100_000);
      for (const path of [
        `/banks/${BANK}/stats`,
        `/banks/${BANK}/stats/memories-timeseries`,
        `/banks/${BANK}/tags`,
        `/banks/${BANK}/entities/graph`,
      ]) {
        const before = await used();
        assert.equal((await t.call('GET', `/v1/default${path}`)).status, 200);
        // At least a unit per whole hop of the bank's memories.
        assert.ok((await used()) - before >= Math.floor(N / K), `${path}: charged`);
      }
      await setLimit(1);
      for (const path of [
        `/banks/${BANK}/stats`,
        `/banks/${BANK}/stats/memories-timeseries`,
        `/banks/${BANK}/tags`,
        `/banks/${BANK}/entities/graph`,
      ]) {
        seen.length = 0;
        const refused = await t.call('GET', `/v1/default${path}`);
        assert.equal(refused.status, 429, `${path}: ${JSON.stringify(refused.body)}`);
        assert.equal(refused.body.error.limit, 'recall_units_per_minute');
        assert.deepEqual(
          seen.filter((s) => /\b(memories|memory_entities|observation_sources|documents)\b/.test(s.sql)),
          [],
          `${path}: nothing scanned`,
        );
      }
      await setLimit(null);
    });
  });
}
