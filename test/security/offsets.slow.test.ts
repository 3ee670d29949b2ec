/**
 * A deep `offset` is walked in bounded hops (issue 18). The Hindsight-style listings accept
 * `offset` up to 1,000,000, and `OFFSET n` reads n rows in one statement: on the embedded engine
 * one request held the event loop's only thread for all of them. Over a bank of 12,000 rows of
 * each kind, every listing at offsets around and past the hop size returns exactly what one
 * `OFFSET` statement returns (same rows, same order, filters and ties included), no statement
 * it sends skips SKIP_PER_STATEMENT rows or more, and the event loop turns between two hops.
 * Time is measured by `npm run bench -- offsets`, not here.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Db } from '../../src/store/db.js';
import { SKIP_PER_STATEMENT } from '../../src/store/sql/offset-walk.js';
import type { Store } from '../../src/store/store.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import { watchedStore } from '../helpers/watched-store.js';

const P = 'default';
const BANK = 'deep';
const N = 12_000;
const K = SKIP_PER_STATEMENT;
const OFFSETS = [0, 1, K - 1, K, K + 1, 2 * K + 7, N - 3, N + 5];
const LIMIT = 10;

/** Seeds N rows of each listing, with ties in every order that has a second key. */
async function seed(db: Db) {
  await db.exec(`
    INSERT INTO banks (project_id, id) VALUES ('${P}', '${BANK}');
    INSERT INTO banks (project_id, id, space_id)
      SELECT '${P}', 'b-' || lpad(i::text, 6, '0'), CASE WHEN i % 3 = 0 THEN 's' END FROM generate_series(1, ${N}) i;
    INSERT INTO memories (project_id, bank_id, id, type, text, content_hash, tags, document_id)
      SELECT '${P}', '${BANK}', gen_random_uuid(), CASE WHEN i % 4 = 0 THEN 'experience' ELSE 'world' END,
             'memory ' || i || CASE WHEN i % 5 = 0 THEN ' apple' ELSE '' END, md5(i::text),
             CASE WHEN i % 2 = 0 THEN ARRAY['even'] ELSE ARRAY['odd'] END, 'doc-' || (i % 40)
        FROM generate_series(1, ${N}) i;
    INSERT INTO documents (project_id, bank_id, id, content_hash, updated_at)
      SELECT '${P}', '${BANK}', 'd-' || i, md5(i::text), '2030-01-01'::timestamptz + (i % 97) * interval '1.5 second'
        FROM generate_series(1, ${N}) i;
    -- Without the lookup keys of entity resolution (a trigger's work, most of the seeding's cost):
    -- the listing does not read them.
    ALTER TABLE entities DISABLE TRIGGER entities_keys_inserted;
    INSERT INTO entities (project_id, bank_id, id, name, name_key, type, mention_count)
      SELECT '${P}', '${BANK}', gen_random_uuid(), 'E' || i, 'e' || i, 'person', i % 37
        FROM generate_series(1, ${N}) i;
    ALTER TABLE entities ENABLE TRIGGER entities_keys_inserted;
    INSERT INTO operations (project_id, bank_id, id, kind, status, payload, created_at)
      SELECT '${P}', '${BANK}', gen_random_uuid(), CASE WHEN i % 3 = 0 THEN 'consolidate' ELSE 'retain' END,
             CASE WHEN i % 2 = 0 THEN 'completed' ELSE 'pending' END, '{}',
             '2030-01-01'::timestamptz + (i % 101) * interval '1.000001 second'
        FROM generate_series(1, ${N}) i;
  `);
}

for (const engine of ENGINES) {
  describe(`a deep offset is walked in bounded hops (${engine})`, () => {
    let db: Db;
    let dispose: () => Promise<void>;
    let store: Store;
    /** Each statement, and whether the event loop ran its immediates since the one before. */
    const seen: { sql: string; params: unknown[]; turned: boolean }[] = [];
    let turned = true;

    before(async () => {
      ({ db, dispose } = await openTestDb(engine));
      await seed(db);
      store = watchedStore(db, (sql, params) => {
        seen.push({ sql, params, turned });
        turned = false;
        setImmediate(() => {
          turned = true;
        });
      });
    });
    after(() => dispose());

    /** The ids of one `OFFSET` statement: what every listing returned before. */
    const byOffset = async (sql: string, params: unknown[], offset: number) =>
      (await db.query<{ id: string }>(`${sql} LIMIT ${LIMIT} OFFSET ${offset}`, params)).map((r) => r.id);

    const byOffsetAll = async (sql: string) =>
      (await db.query<{ id: string }>(sql, [P, BANK])).map((r) => r.id);

    /** Runs `list` at every offset, checks its ids against `reference`, and each statement's skip. */
    async function check(
      what: string,
      list: (offset: number) => Promise<string[]>,
      reference: { sql: string; params: unknown[] },
    ) {
      for (const offset of OFFSETS) {
        seen.length = 0;
        const got = await list(offset);
        const want = await byOffset(reference.sql, reference.params, offset);
        assert.deepEqual(got, want, `${what} at offset ${offset}`);
        for (const s of seen) {
          const m = /\bOFFSET\s+(\$(\d+)|\d+)/i.exec(s.sql);
          if (!m) continue;
          const skip = Number(m[2] ? s.params[Number(m[2]) - 1] : m[1]);
          assert.ok(skip < K, `${what} at offset ${offset}: a statement skips ${skip} rows:\n${s.sql}`);
        }
        // As few hops as the offset needs: one statement per K rows, not one per page or per row;
        // and other requests run between two hops.
        const hops = seen.filter((s) => /\bOFFSET\b/i.test(s.sql));
        if (offset > 0)
          assert.ok(hops.length <= Math.ceil(offset / K), `${what} at offset ${offset}: ${hops.length} hops`);
        assert.ok(
          hops.slice(1).every((s) => s.turned),
          `${what} at offset ${offset}: two hops without a turn of the event loop`,
        );
      }
    }

    test('memories, filtered or not (and the chunks read through them)', async () => {
      const base = `SELECT m.id::text AS id FROM memories m WHERE m.project_id = $1 AND m.bank_id = $2`;
      await check(
        'memories',
        async (offset) =>
          (await store.listMemories(P, BANK, {}, { limit: LIMIT, offset })).items.map((m) => m.id),
        { sql: `${base} ORDER BY m.seq DESC`, params: [P, BANK] },
      );
      await check(
        'world memories tagged even',
        async (offset) =>
          (
            await store.listMemories(
              P,
              BANK,
              { types: ['world'], tags: ['even'], tagsMatch: 'any_strict' },
              { limit: LIMIT, offset },
            )
          ).items.map((m) => m.id),
        {
          sql: `${base} AND m.type = 'world' AND m.tags && ARRAY['even'] ORDER BY m.seq DESC`,
          params: [P, BANK],
        },
      );
      await check(
        'memories matching a text',
        async (offset) =>
          (await store.listMemories(P, BANK, { q: 'apple' }, { limit: LIMIT, offset })).items.map(
            (m) => m.id,
          ),
        { sql: `${base} AND m.text ILIKE '%apple%' ORDER BY m.seq DESC`, params: [P, BANK] },
      );
    });

    test('documents, tied on their update time', async () => {
      await check(
        'documents',
        async (offset) =>
          (await store.listDocuments(P, BANK, { limit: LIMIT, offset })).items.map((d) => d.id),
        {
          sql: `SELECT d.id FROM documents d WHERE d.project_id = $1 AND d.bank_id = $2 ORDER BY d.updated_at DESC, d.id`,
          params: [P, BANK],
        },
      );
    });

    test('entities, tied on their mention count', async () => {
      await check(
        'entities',
        async (offset) =>
          (await store.listEntities(P, BANK, { limit: LIMIT, offset })).items.map((e) => e.id),
        {
          sql: `SELECT id::text AS id FROM entities WHERE project_id = $1 AND bank_id = $2 AND mention_count > 0
                ORDER BY mention_count DESC, name_key`,
          params: [P, BANK],
        },
      );
    });

    test('entities by cursor: each page starts where the last ended, without walking from the start', async () => {
      const all = await byOffsetAll(
        `SELECT id::text AS id FROM entities WHERE project_id = $1 AND bank_id = $2 AND mention_count > 0
         ORDER BY mention_count DESC, name_key`,
      );
      const listed: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      seen.length = 0;
      do {
        const page = await store.listEntities(P, BANK, { limit: 1000, cursor });
        listed.push(...page.items.map((e) => e.id));
        cursor = page.next_cursor ?? undefined;
        pages++;
      } while (cursor);
      assert.deepEqual(listed, all);
      assert.equal(seen.filter((s) => /\bOFFSET\b/i.test(s.sql)).length, 0, 'a cursor page walked an offset');
      // A cursor of the earlier form (an offset) still reads as one.
      const old = Buffer.from('7000').toString('base64url');
      const page = await store.listEntities(P, BANK, { limit: 5, cursor: old });
      assert.deepEqual(
        page.items.map((e) => e.id),
        all.slice(7000, 7005),
      );
      assert.ok(pages > 1);
    });

    test('operations, filtered, tied on their creation time', async () => {
      const base = 'SELECT id::text AS id FROM operations WHERE project_id = $1 AND bank_id = $2';
      await check(
        'operations',
        async (offset) =>
          (await store.listOperations(P, BANK, {}, { limit: LIMIT, offset })).items.map((o) => o.id),
        { sql: `${base} ORDER BY created_at DESC, id`, params: [P, BANK] },
      );
      await check(
        'pending retains',
        async (offset) =>
          (
            await store.listOperations(
              P,
              BANK,
              { status: 'pending', kind: 'retain' },
              { limit: LIMIT, offset },
            )
          ).items.map((o) => o.id),
        {
          sql: `${base} AND status = 'pending' AND kind = 'retain' ORDER BY created_at DESC, id`,
          params: [P, BANK],
        },
      );
    });

    test("a project's banks, all or of one space", async () => {
      const base = 'SELECT id FROM banks WHERE project_id = $1';
      await check(
        'banks',
        async (offset) => (await store.listBanks(P, {}, { limit: LIMIT, offset })).map((b) => b.id),
        { sql: `${base} ORDER BY id`, params: [P] },
      );
      await check(
        'banks of a space',
        async (offset) =>
          (await store.listBanks(P, { spaceId: 's' }, { limit: LIMIT, offset })).map((b) => b.id),
        { sql: `${base} AND space_id = 's' ORDER BY id`, params: [P] },
      );
    });
  });
}
