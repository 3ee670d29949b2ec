/**
 * Red team 3 (issue 18): attacks on what earlier rounds left alone, as a hostile tenant with a
 * valid key of its own project. Each test is the attack; docs/security.md "Red team 3" lists the
 * figures before and after, and what held.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { entityStates } from '../../src/core/entity-views.js';
import type { Db } from '../../src/store/db.js';
import { LINK_SAMPLE } from '../../src/store/sql/entities.js';
import type { Store } from '../../src/store/store.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { watchedStore } from '../helpers/watched-store.js';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

for (const engine of ENGINES) {
  describe(`red team 3 (${engine})`, () => {
    let t: TestApp;
    // Fixed windows: moving the clock past the minute's end is waiting for the reset.
    let clock = Date.parse('2030-01-01T10:00:05Z');
    const keys: Record<string, string> = {};

    before(async () => {
      t = await testApp(engine, { now: () => new Date(clock) });
      for (const p of ['rt3-batch']) {
        const made = await t.call('POST', '/v1/default/projects', { body: { id: p, name: p } });
        assert.equal(made.status, 201);
        const k = await t.call('POST', `/v1/default/projects/${p}/keys`, {
          body: { name: 'k', scopes: ['retain', 'recall', 'mcp'] },
        });
        assert.equal(k.status, 201);
        keys[p] = k.body.key as string;
      }
    });
    after(() => t.close());

    test('a JSON-RPC batch of MCP tool calls counts each call against the requests per minute', async () => {
      const p = 'rt3-batch';
      const limit = 5;
      const r = await t.call('PATCH', `/v1/default/projects/${p}`, {
        body: { limits: { requests_per_minute: limit } },
      });
      assert.equal(r.status, 200);
      const call = (id: number) => ({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: {
          name: 'retain',
          arguments: { bank: 'b', items: [{ content: `batched fact number ${id}` }] },
        },
      });
      // One HTTP request, 40 tool calls: 8 times the minute's limit.
      const batch = await t.call('POST', '/mcp', {
        token: keys[p],
        headers: MCP_HEADERS,
        body: Array.from({ length: 40 }, (_, i) => call(i + 1)),
      });
      assert.equal(batch.status, 429, JSON.stringify(batch.body).slice(0, 300));
      assert.equal(batch.body.error.limit, 'requests_per_minute');
      assert.equal(await t.services.store.getBank(p, 'b'), null, 'no call of the refused batch ran');
      // Within the limit a batch still runs (the next minute: the refused calls were counted).
      clock += 60_000;
      const small = await t.call('POST', '/mcp', {
        token: keys[p],
        headers: MCP_HEADERS,
        body: [call(1), call(2), call(3)],
      });
      assert.equal(small.status, 200, JSON.stringify(small.body).slice(0, 300));
      assert.equal(small.body.length, 3);
      const page = await t.call('GET', '/v1/me/banks/b/memories', { token: keys[p] });
      assert.equal(page.status, 200);
      assert.equal(page.body.items.length, 3);
    });
  });
}

/** Memories mentioning the hub entity (the bank owner, named in every memory). */
const HUB_MENTIONS = 12_000;
/** Entities of the other result memories, each mentioned by a few memories. */
const SMALL = 300;

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

/**
 * A bank whose memory `r-0` mentions the hub (in HUB_MENTIONS memories) and memories `r-1..`
 * mention SMALL entities of 3 mentions each; some of the hub's memories are observations.
 */
async function seedHub(db: Db) {
  // Without triggers (foreign key checks, entity lookup keys: none of it read here): 12,000
  // checks of one entity row in one transaction take minutes.
  await db.exec(`
    SET session_replication_role = replica;
    INSERT INTO banks (project_id, id) VALUES ('default', 'hub');
    INSERT INTO entities (project_id, bank_id, id, name, name_key, type, mention_count)
      SELECT 'default', 'hub', md5('e' || i)::uuid, 'E' || i, 'e' || i, 'person',
             CASE WHEN i = 0 THEN ${HUB_MENTIONS} ELSE 3 END
        FROM generate_series(0, ${SMALL}) i;
    INSERT INTO memories (project_id, bank_id, id, type, text, content_hash, mentioned_at)
      SELECT 'default', 'hub', md5('m' || i)::uuid, CASE WHEN i % 1000 = 7 THEN 'observation' ELSE 'world' END,
             'memory ' || i, md5(i::text), '2030-01-01'::timestamptz + i * interval '1 minute'
        FROM generate_series(0, ${HUB_MENTIONS + 3 * SMALL}) i;
    INSERT INTO memory_entities (project_id, bank_id, memory_id, entity_id)
      SELECT 'default', 'hub', md5('m' || i)::uuid, md5('e0')::uuid FROM generate_series(0, ${HUB_MENTIONS - 1}) i;
    INSERT INTO memory_entities (project_id, bank_id, memory_id, entity_id)
      SELECT 'default', 'hub', md5('m' || (${HUB_MENTIONS} + 3 * (i - 1) + k))::uuid, md5('e' || i)::uuid
        FROM generate_series(1, ${SMALL}) i, generate_series(0, 2) k;
    RESET session_replication_role;
    ANALYZE;
  `);
}

for (const engine of ENGINES) {
  describe(`recall's entity section reads a bounded number of links (${engine})`, () => {
    let db: Db;
    let dispose: () => Promise<void>;
    let store: Store;
    const seen: { sql: string; params: unknown[] }[] = [];
    before(async () => {
      ({ db, dispose } = await openTestDb(engine));
      await seedHub(db);
      store = watchedStore(db, (sql, params) => seen.push({ sql, params }));
    });
    after(() => dispose());

    /** Rows of memories and memory_entities each statement since `from` read (its plan, run again). */
    const rowsRead = async (from: number) => {
      const out: number[] = [];
      for (const { sql, params } of seen.slice(from)) {
        const [row] = await db.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
          `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
          params,
        );
        const scans = nodes(row!['QUERY PLAN'][0]!.Plan).filter((n) =>
          ['memories', 'memory_entities'].includes(n['Relation Name'] ?? ''),
        );
        out.push(
          scans.reduce(
            (a, n) => a + (n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0)) * n['Actual Loops'],
            0,
          ),
        );
      }
      return out;
    };

    test('a result mentioning the bank owner (a hub of 12,000 mentions) does not read them all', async () => {
      const [r0] = await db.query<{ id: string }>(`SELECT md5('m0')::uuid::text AS id`);
      const from = seen.length;
      const section = await entityStates({ store }, 'default', 'hub', [r0!.id], 100_000);
      const hub = section.E0!;
      assert.ok(hub, 'the hub is in the section');
      assert.equal(hub.observations.length, 5, 'five memories of the hub');
      const read = await rowsRead(from);
      // A sample of the hub's links, and the memories they name; before: all 12,000 of each.
      assert.ok(
        Math.max(...read) <= 2 * LINK_SAMPLE + 10,
        `a statement read ${Math.max(...read)} rows (per statement: ${read})`,
      );
    });

    test('many result entities share one bound; an entity of few mentions keeps its exact memories', async () => {
      const ids = await db.query<{ id: string }>(
        `SELECT md5('m' || (${HUB_MENTIONS} + 3 * i))::uuid::text AS id FROM generate_series(0, ${SMALL - 1}) i`,
      );
      const from = seen.length;
      const section = await entityStates(
        { store },
        'default',
        'hub',
        ids.map((r) => r.id),
        100_000,
      );
      assert.equal(Object.keys(section).length, SMALL);
      // Each small entity: its three memories, newest first.
      const e5 = section.E5!;
      assert.deepEqual(
        e5.observations.map((o) => o.text),
        [2, 1, 0].map((k) => `memory ${HUB_MENTIONS + 3 * 4 + k}`),
      );
      const read = await rowsRead(from);
      assert.ok(Math.max(...read) <= 2 * 20_000, `a statement read ${Math.max(...read)} rows`);
    });
  });
}
