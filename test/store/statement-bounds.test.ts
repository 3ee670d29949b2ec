/**
 * Every statement of a big write or entity lookup takes a bounded number of rows, whatever the
 * input's size (issue 18): the embedded engine runs each statement in the event loop's thread,
 * so a statement whose rows grow with the request holds every other tenant for as long as the
 * request is big. Here one insert of 120 memories (3,600 term rows, 1,200 new entities, 1,200
 * links, 120 aliases) and one lookup of 300 names: each statement is recorded with the rows it
 * was given (the length of its array and JSON-array parameters) and checked against its bound,
 * and the data is checked whole. Time is measured by `npm run bench -- isolation`, not here.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Db, Queryable } from '../../src/store/db.js';
import { storeOver } from '../../src/store/open.js';
import { LOOKUPS_PER_STATEMENT } from '../../src/store/sql/intake.js';
import {
  ENTITIES_PER_STATEMENT,
  LINKS_PER_STATEMENT,
  MEMORIES_PER_STATEMENT,
  TERMS_PER_STATEMENT,
} from '../../src/store/sql/memories.js';
import type { Store } from '../../src/store/store.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import { newMemory } from '../helpers/memory.js';

const P = 'default';
const BANK = 'bounds';
const MEMORIES = 120;
const TERMS_EACH = 30;
const ENTITIES_EACH = 10;

interface Seen {
  sql: string;
  /** The most rows any one parameter carries: an array's length, or a JSON array's. */
  rows: number;
  /** For a JSON array of objects with a `key`: how many distinct keys it holds. */
  keys: number;
  /** Whether the event loop took a turn (ran an immediate) since the statement before. */
  turned: boolean;
}

function rowsOf(params: unknown[] | undefined): Pick<Seen, 'rows' | 'keys'> {
  let rows = 0;
  let keys = 0;
  for (const p of params ?? []) {
    let list: unknown[] | null = Array.isArray(p) ? p : null;
    if (typeof p === 'string' && p.startsWith('[')) list = JSON.parse(p) as unknown[];
    if (!list) continue;
    rows = Math.max(rows, list.length);
    const named = list.map((x) => (x as { key?: unknown })?.key).filter((k) => k !== undefined);
    keys = Math.max(keys, new Set(named).size);
  }
  return { rows, keys };
}

/** The database seen through a recorder of every statement and the rows it is given. */
function recorded(db: Db, seen: Seen[]): Db {
  // Cleared at each statement and set by an immediate queued then: set at the next statement
  // when the loop ran its immediates in between, not when the statements ran back to back.
  let turned = true;
  const mark = () => {
    const was = turned;
    turned = false;
    setImmediate(() => {
      turned = true;
    });
    return was;
  };
  const wrap = (q: Queryable): Queryable => ({
    query: (sql, params) => {
      seen.push({ sql, ...rowsOf(params), turned: mark() });
      return q.query(sql, params);
    },
    exec: (sql) => {
      seen.push({ sql, rows: 0, keys: 0, turned: mark() });
      return q.exec(sql);
    },
  });
  return {
    ...db,
    ...wrap(db),
    transaction: (fn, mode) => db.transaction((tx) => fn(wrap(tx)), mode),
  };
}

/** Memory i names entities `person i j` (new) and `shared j` (named by every memory). */
function memories() {
  return Array.from({ length: MEMORIES }, (_, i) => {
    const terms = new Map(Array.from({ length: TERMS_EACH }, (_, j) => [`term${i}x${j}`, 1] as const));
    const entities = Array.from({ length: ENTITIES_EACH }, (_, j) => ({
      text: j < ENTITIES_EACH - 1 ? `Person ${i} ${j}` : `Shared ${i % 3}`,
      type: 'PERSON',
      ...(j === 0 ? { alias: `P${i}` } : {}),
    }));
    return newMemory({ text: `memory ${i}`, embedding: new Float32Array(100).fill(0.1), terms, entities });
  });
}

for (const engine of ENGINES) {
  describe(`statements stay bounded by input size (${engine})`, () => {
    let db: Db;
    let dispose: () => Promise<void>;
    let store: Store;
    const seen: Seen[] = [];
    before(async () => {
      ({ db, dispose } = await openTestDb(engine));
      store = storeOver(recorded(db, seen));
      await store.ensureBank(P, BANK, {});
    });
    after(() => dispose());

    const of = (pattern: RegExp) => seen.filter((s) => pattern.test(s.sql));

    test('an insert of many memories, terms, entities and links: bounded rows per statement, nothing lost', async () => {
      seen.length = 0;
      await store.insertMemories(P, BANK, memories());
      const checks: [RegExp, keyof Seen, number, number][] = [
        [/INSERT INTO memories \(/, 'rows', MEMORIES_PER_STATEMENT, MEMORIES],
        [/INSERT INTO memory_terms/, 'rows', TERMS_PER_STATEMENT, MEMORIES * TERMS_EACH],
        [/INSERT INTO bank_terms/, 'rows', TERMS_PER_STATEMENT, MEMORIES * TERMS_EACH],
        [/INSERT INTO entities/, 'keys', ENTITIES_PER_STATEMENT, MEMORIES * (ENTITIES_EACH - 1) + 3],
        [/INSERT INTO memory_entities/, 'rows', LINKS_PER_STATEMENT, MEMORIES * ENTITIES_EACH],
      ];
      for (const [pattern, field, bound, total] of checks) {
        const statements = of(pattern);
        assert.ok(
          statements.length >= Math.ceil(total / bound),
          `${pattern}: ${statements.length} statements`,
        );
        for (const s of statements)
          assert.ok((s[field] as number) <= bound, `${pattern}: ${s[field]} > ${bound}`);
        const given = statements.reduce((n, s) => n + (s[field] as number), 0);
        assert.equal(given, total, `${pattern}: every row written once`);
      }
      const [counts] = await db.query<{ memories: number; terms: number; entities: number; links: number }>(
        `SELECT (SELECT count(*) FROM memories WHERE bank_id = $1)::int AS memories,
                (SELECT count(*) FROM memory_terms WHERE bank_id = $1)::int AS terms,
                (SELECT count(*) FROM entities WHERE bank_id = $1)::int AS entities,
                (SELECT count(*) FROM memory_entities WHERE bank_id = $1)::int AS links`,
        [BANK],
      );
      assert.deepEqual(counts, {
        memories: MEMORIES,
        terms: MEMORIES * TERMS_EACH,
        entities: MEMORIES * (ENTITIES_EACH - 1) + 3,
        links: MEMORIES * ENTITIES_EACH,
      });
      const [bank] = await db.query<{ memory_count: number }>(
        'SELECT memory_count FROM banks WHERE project_id = $1 AND id = $2',
        [P, BANK],
      );
      assert.equal(bank?.memory_count, MEMORIES);
    });

    test('a lookup of many names: bounded names per statement, every match found, most mentioned first', async () => {
      seen.length = 0;
      const keys = [
        ...Array.from({ length: 297 }, (_, i) => `person ${i % MEMORIES} ${Math.floor(i / MEMORIES)}`),
        'shared 0',
        'shared 1',
        'shared 2',
      ];
      const words = [...keys.map((k) => k.split(' ')[0]!), ...Array.from({ length: 200 }, (_, i) => `p${i}`)];
      const found = await store.findEntities(P, BANK, keys, words);
      const statements = of(/WITH found AS/);
      assert.ok(statements.length >= Math.ceil(keys.length / LOOKUPS_PER_STATEMENT));
      assert.ok(
        statements.slice(1).every((st) => st.turned),
        'a turn of the event loop between two lookups',
      );
      for (const s of statements) assert.ok(s.rows <= 2 * LOOKUPS_PER_STATEMENT, `${s.rows} names and words`);
      const names = new Set(found.map((e) => e.name.toLowerCase()));
      for (const k of keys) assert.ok(names.has(k), `${k} found`);
      assert.equal(new Set(found.map((e) => e.id)).size, found.length);
      assert.deepEqual(
        found.slice(0, 3).map((e) => e.mention_count),
        [40, 40, 40],
        'the shared entities, named by a third of the memories each, first',
      );
      for (let i = 1; i < found.length; i++)
        assert.ok(found[i - 1]!.mention_count >= found[i]!.mention_count, 'ordered by mentions');
    });

    test('a read of many memories with their entity names: bounded parts, a turn of the event loop between', async () => {
      const ids = (
        await db.query<{ id: string }>('SELECT id::text AS id FROM memories WHERE bank_id = $1', [BANK])
      ).map((r) => r.id);
      seen.length = 0;
      const read = await store.getMemories(P, BANK, ids);
      assert.equal(read.length, MEMORIES);
      assert.ok(
        read.every((m) => m.entities.length === ENTITIES_EACH),
        'every entity name read',
      );
      const statements = of(/^SELECT m\.id::text AS id, m\.bank_id/);
      assert.ok(statements.length >= 3, `${statements.length} statements`);
      for (const st of statements) assert.ok(st.rows <= 20, `${st.rows} memories in one statement`);
      assert.ok(
        statements.slice(1).every((st) => st.turned),
        'a turn of the event loop between two parts',
      );
    });
  });
}
