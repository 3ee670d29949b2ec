/**
 * A listing's `total` reads no more than a hop of rows per statement (issue 18). Every listing
 * answered `total` with one `count(*)` over the bank: on a bank of a million rows one long
 * statement (on the embedded engine, the event loop's only thread held for all of it), and any
 * key with read scope could send it as often as its request rate allowed. Over a bank of 12,000
 * rows of each kind, each listing's total (filtered or not) is exact, no statement a listing
 * sends reads more than SKIP_PER_STATEMENT rows in any step of its plan (EXPLAIN ANALYZE of the
 * very statement), and the walk past the first hop, for a total or a deep offset, is charged to
 * the project's recall units before it runs: a spent budget is a 429.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Db } from '../../src/store/db.js';
import { SKIP_PER_STATEMENT } from '../../src/store/sql/offset-walk.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import { recallUnitsSpent, setProjectLimits } from '../helpers/project-usage.js';
import { mostRowsRead, type Sent, turnWatchedStore } from '../helpers/statement-reads.js';

const P = 'default';
const BANK = 'deep';
const N = 12_000;
const K = SKIP_PER_STATEMENT;

async function seed(db: Db) {
  await db.exec(`
    INSERT INTO spaces (project_id, id, name) VALUES ('${P}', 's', 's');
    INSERT INTO banks (project_id, id, memory_count) VALUES ('${P}', '${BANK}', ${N});
    INSERT INTO banks (project_id, id, space_id)
      SELECT '${P}', 'b-' || lpad(i::text, 6, '0'), CASE WHEN i % 3 = 0 THEN 's' END FROM generate_series(1, ${N}) i;
    INSERT INTO memories (project_id, bank_id, id, type, text, content_hash, document_id, state)
      SELECT '${P}', '${BANK}', gen_random_uuid(), CASE WHEN i % 4 = 0 THEN 'experience' ELSE 'world' END,
             'memory ' || i || CASE WHEN i % 5 = 0 THEN ' apple' ELSE '' END, md5(i::text),
             CASE WHEN i <= 30 THEN 'doc-small' END, 'valid'
        FROM generate_series(1, ${N}) i;
    INSERT INTO documents (project_id, bank_id, id, content_hash, updated_at)
      SELECT '${P}', '${BANK}', 'd-' || i, md5(i::text), '2030-01-01'::timestamptz + (i % 97) * interval '1.5 second'
        FROM generate_series(1, ${N}) i;
    INSERT INTO documents (project_id, bank_id, id, content_hash) VALUES ('${P}', '${BANK}', 'doc-small', 'x');
    ALTER TABLE entities DISABLE TRIGGER entities_keys_inserted;
    INSERT INTO entities (project_id, bank_id, id, name, name_key, type, mention_count)
      SELECT '${P}', '${BANK}', gen_random_uuid(), 'E' || i, 'e' || i, 'person', 1 + i % 37
        FROM generate_series(1, ${N}) i;
    ALTER TABLE entities ENABLE TRIGGER entities_keys_inserted;
    INSERT INTO operations (project_id, bank_id, id, kind, status, payload, created_at)
      SELECT '${P}', '${BANK}', gen_random_uuid(), 'retain', CASE WHEN i % 2 = 0 THEN 'completed' ELSE 'failed' END, '{}',
             '2030-01-01'::timestamptz + (i % 101) * interval '1.000001 second'
        FROM generate_series(1, ${N}) i;
    INSERT INTO llm_requests (project_id, bank_id, seq, started_at, operation, scope, provider, model, status,
                              duration_ms, input_tokens, output_tokens)
      SELECT '${P}', '${BANK}', i, now(), 'retain', 'extract', 'fake', 'm', CASE WHEN i % 3 = 0 THEN 'error' ELSE 'ok' END,
             1, 1, 1 FROM generate_series(1, ${N}) i;
    ANALYZE;
  `);
}

for (const engine of ENGINES) {
  describe(`a listing's total reads a bounded number of rows per statement (${engine})`, () => {
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

    const used = () => recallUnitsSpent(t, P);
    const setLimit = (n: number | null) => setProjectLimits(t, P, { recall_units_per_minute: n });
    const count = async (sql: string) => (await db.query<{ n: number }>(sql, [P, BANK]))[0]!.n;

    /** Lists `path`, checks `total` against `exact`, and each statement the listing sent. */
    async function check(path: string, exact: string) {
      seen.length = 0;
      const r = await t.call('GET', `/v1/default/banks/${BANK}${path}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const statements = [...seen];
      assert.equal(r.body.total, await count(exact), `${path}: total`);
      for (const s of statements) {
        // The totals (a filtered page's own reads are another matter: see docs/security.md).
        if (!/^\s*SELECT\b/i.test(s.sql) || !/\bcount\(/i.test(s.sql)) continue;
        const read = await mostRowsRead(db, s.sql, s.params);
        // A hop reads K rows, and those tied with the last hop's on the first key of the order
        // (at most N / 37 here: entities share 37 mention counts): the keyset starts at that key's first row.
        assert.ok(read <= K + 1 + Math.ceil(N / 37), `${path}: a statement reads ${read} rows:\n${s.sql}`);
      }
      // Each walk's statements: a total's count, a filtered page's hops, a deep offset's skips.
      const page = (sql: string) => /\bAS h0\b/.test(sql);
      const kinds = [
        (sql: string) => /FILTER \(WHERE kept\)/.test(sql) && !page(sql),
        page,
        (sql: string) => /OFFSET \$/.test(sql),
      ];
      for (const kind of kinds) {
        const hops = statements.filter((s) => kind(s.sql));
        assert.ok(
          hops.slice(1).every((s) => s.turned),
          `${path}: two statements of a walk without a turn of the event loop`,
        );
      }
    }

    const inBank = (table: string, cond = '') =>
      `SELECT count(*)::int AS n FROM ${table} WHERE project_id = $1 AND bank_id = $2${cond}`;

    test('memories (Hindsight listing), by type, by text, of one document, and their graph', async () => {
      await check('/memories/list', inBank('memories', ` AND state = 'valid'`));
      await check('/memories/list?type=world', inBank('memories', ` AND type = 'world'`));
      await check('/memories/list?q=apple', inBank('memories', ` AND text ILIKE '%apple%'`));
      await check(
        '/memories/list?document_id=doc-small',
        inBank('memories', ` AND document_id = 'doc-small'`),
      );
    });

    test('the valid (default), invalidated or all memories and the bank profile are read from counters', async () => {
      await db.query(
        `UPDATE memories SET state = 'invalidated' WHERE project_id = $1 AND bank_id = $2 AND seq % 7 = 0`,
        [P, BANK],
      );
      for (const [path, state] of [
        ['/memories/list', ` AND state = 'valid'`],
        ['/memories/list?state=invalidated', ` AND state = 'invalidated'`],
        ['/memories/list?state=all', ''],
      ] as const) {
        await check(path, inBank('memories', state));
        // (The page's own hops, a filtered walk, are not its total.)
        const counted = seen.filter(
          (s) => /\bcount\(/i.test(s.sql) && /\bFROM memories\b/i.test(s.sql) && !/\bAS h0\b/.test(s.sql),
        );
        assert.deepEqual(
          counted.map((s) => s.sql),
          [],
          `${path}: the total counts nothing`,
        );
      }
      seen.length = 0;
      const profile = await t.call('GET', `/v1/default/banks/${BANK}`);
      assert.equal(profile.status, 200, JSON.stringify(profile.body));
      assert.equal(profile.body.memory_count, await count(inBank('memories')));
      assert.equal(profile.body.entity_count, await count(inBank('entities')));
      assert.equal(
        profile.body.document_count,
        await count(
          inBank('memories', ' AND document_id IS NOT NULL').replace(
            'count(*)',
            'count(DISTINCT document_id)',
          ),
        ),
      );
      const counted = seen.filter(
        (s) => /\bcount\(/i.test(s.sql) && /\bFROM (memories|entities)\b/i.test(s.sql),
      );
      assert.deepEqual(
        counted.map((s) => s.sql),
        [],
        'the profile counts nothing',
      );
      await db.query(`UPDATE memories SET state = 'valid' WHERE project_id = $1 AND bank_id = $2`, [P, BANK]);
    });

    test('a filtered page that matches nothing walks the bank in charged hops, none over K rows', async () => {
      for (const [path, table] of [
        ['/memories/list?q=nowhere-to-be-found&limit=5', 'memories m'],
        ['/operations?status=cancelled&limit=5', 'operations'],
        // The seeded calls are 'ok' or 'error': none succeeded.
        ['/llm-requests?status=success&limit=5', 'llm_requests'],
        // The project's banks (12,001) whose id holds a text none does.
        ['/../../banks?q=nowhere&limit=5', 'banks'],
      ] as const) {
        const before = await used();
        seen.length = 0;
        const r = await t.call('GET', `/v1/default/banks/${BANK}${path}`);
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.deepEqual([r.body.items, r.body.total], [[], 0]);
        const reads = [...seen].filter(
          (s) => /^\s*SELECT\b/i.test(s.sql) && s.sql.includes(`FROM ${table} `),
        );
        for (const s of reads) {
          const read = await mostRowsRead(db, s.sql, s.params);
          // A hop, and the rows tied with the last hop's first sort key (operations share 101 creation times).
          assert.ok(read <= K + 1 + Math.ceil(N / 37), `${path}: a statement reads ${read} rows:\n${s.sql}`);
        }
        // Its total (12,000 rows counted: 2 hops past the first) and its page (the same walk) are paid.
        assert.equal(await used(), before + 2 * Math.floor(N / K), path);
      }
      // Rows and order as the single statement gives them, at an offset, filtered by type and text.
      for (const path of ['?q=apple&offset=1990&limit=20', '?type=experience&q=apple&offset=7&limit=3']) {
        const page = await t.call('GET', `/v1/default/banks/${BANK}/memories/list${path}`);
        const type = path.includes('type=') ? ` AND type = 'experience'` : '';
        const offset = Number(/offset=(\d+)/.exec(path)![1]);
        const limit = Number(/limit=(\d+)/.exec(path)![1]);
        const want = await db.query<{ id: string }>(
          `SELECT id::text AS id FROM memories WHERE project_id = $1 AND bank_id = $2 AND state = 'valid'
             AND text ILIKE '%apple%'${type} ORDER BY seq DESC OFFSET ${offset} LIMIT ${limit}`,
          [P, BANK],
        );
        assert.deepEqual(
          page.body.items.map((m: { id: string }) => m.id),
          want.map((w) => w.id),
          path,
        );
      }
    });

    test('documents, entities, operations, model calls', async () => {
      await check('/documents', inBank('documents'));
      await check('/entities', inBank('entities', ' AND mention_count > 0'));
      await check('/operations', inBank('operations'));
      await check('/operations?status=failed', inBank('operations', ` AND status = 'failed'`));
      await check('/llm-requests', inBank('llm_requests'));
      await check('/llm-requests?status=error', inBank('llm_requests', ` AND status = 'error'`));
    });

    test("the project's banks, all or of one space", async () => {
      await check(
        '/../../banks?limit=2',
        `SELECT count(*)::int + 0 * length($2) AS n FROM banks WHERE project_id = $1`,
      );
      const of = await t.call('GET', '/v1/default/banks?limit=2&space=s');
      assert.equal(of.status, 200, JSON.stringify(of.body));
      assert.equal(of.body.total, N / 3);
    });

    test('the walk past the first hop is charged in recall units before it runs', async () => {
      await setLimit(1000);
      const before = await used();
      // A first page over fewer than K rows costs nothing.
      assert.equal(
        (await t.call('GET', `/v1/default/banks/${BANK}/memories/list?document_id=doc-small`)).status,
        200,
      );
      assert.equal(await used(), before);
      // 12,000 rows counted: two hops past the first; offset 10,000: two hops of K skipped.
      const deep = await t.call('GET', `/v1/default/banks/${BANK}/documents?offset=${2 * K}&limit=1`);
      assert.equal(deep.status, 200, JSON.stringify(deep.body));
      assert.equal(await used(), before + 2 + Math.floor(N / K));
      await setLimit(1);
      seen.length = 0;
      const refused = await t.call('GET', `/v1/default/banks/${BANK}/operations?offset=${3 * K}`);
      assert.equal(refused.status, 429, JSON.stringify(refused.body));
      assert.equal(refused.body.error.limit, 'recall_units_per_minute');
      assert.ok(refused.headers.get('retry-after'));
      // Refused before a single hop of the skip ran.
      assert.equal(seen.filter((s) => /OFFSET \$/.test(s.sql)).length, 0);
      await setLimit(null);
    });
  });
}
