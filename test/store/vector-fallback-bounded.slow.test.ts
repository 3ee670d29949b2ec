/**
 * When the HNSW walk comes back short — a filter (types, tags, time) passes fewer memories than
 * the pool asks for, so the walk gives up after pgvector's max_scan_tuples — the vector channel
 * falls back to an exact search. That search reads a number of rows bounded by a constant (the
 * bank's newest EXACT_FALLBACK_ROWS, and as many of each type the filter names, through indexes),
 * never the whole bank: at a million memories an exact scan of the bank is seconds. On PostgreSQL
 * the plan of the fallback is read with EXPLAIN. On both engines the hits hold the exact answer
 * among the rows searched, and only memories the filter passes, best first (for a tag, older ones
 * only where the walk reached them).
 * Slow tier: each engine fills a bank past the fallback's bound and builds its HNSW index.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EXACT_FALLBACK_ROWS } from '../../src/store/exact-search.js';
import type { Db } from '../../src/store/db.js';
import type { MemoryFilter } from '../../src/store/records.js';
import type { Store } from '../../src/store/store.js';
import { withVectorIndexesBuiltAfter } from '../helpers/bulk.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import { newMemory } from '../helpers/memory.js';
import { watchedStore } from '../helpers/watched-store.js';

const SIZE = EXACT_FALLBACK_ROWS + 2000;
const LIMIT = 20;
/** Memories of a type and a tag nothing else has: three among the oldest, three among the newest. */
const RARE = [5, 700, 1500, SIZE - 900, SIZE - 40, SIZE - 1];

function vector(seed: number): Float32Array {
  const v = new Float32Array(100);
  for (let i = 0; i < v.length; i++) v[i] = Math.sin(seed * 12.9898 + i * 78.233);
  const norm = Math.hypot(...v);
  return v.map((a) => a / norm);
}

async function fill(store: Store, bank: string) {
  await store.ensureBank('default', bank, {});
  for (let from = 0; from < SIZE; from += 1000) {
    const batch = Array.from({ length: Math.min(1000, SIZE - from) }, (_, k) => {
      const i = from + k;
      const rare = RARE.includes(i);
      return newMemory({
        text: `m${i}`,
        embedding: vector(i),
        terms: new Map([[`t${i}`, 1]]),
        type: rare ? 'procedure' : 'world',
        tags: rare ? ['rare'] : ['common'],
      });
    });
    await store.insertMemories('default', bank, batch);
  }
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

for (const engine of ENGINES) {
  describe(`the exact fallback after a short vector walk is bounded (${engine})`, () => {
    let db: Db;
    let dispose: () => Promise<void>;
    let store: Store;
    /** Vector statements of the last search, in order, and the one that set the walk up. */
    let statements: { sql: string; params: unknown[] }[] = [];
    let setUp: { sql: string; params: unknown[] } | null = null;
    before(async () => {
      ({ db, dispose } = await openTestDb(engine));
      store = watchedStore(db, (sql, params) => {
        if (sql.includes('<=>')) statements.push({ sql, params });
        if (sql.includes('hnsw.iterative_scan')) setUp = { sql, params };
      });
      await withVectorIndexesBuiltAfter(db, () => fill(store, 'big'));
      await db.exec('ANALYZE');
    });
    after(() => dispose());

    /** Each filter, and whether the fallback searches every memory it passes. */
    const filters: [string, MemoryFilter, boolean][] = [
      ['a type', { types: ['procedure'] }, true],
      [
        'a type named twice, with a common one',
        { types: ['procedure', 'procedure', 'world'], tags: ['rare'], tagsMatch: 'any_strict' },
        true,
      ],
      ['a tag', { tags: ['rare'], tagsMatch: 'any_strict' }, false],
    ];
    const query = vector(1500.5);

    const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
    /**
     * The hits are rare memories, best first, and hold every rare one among the bank's newest rows;
     * with `whole`, every rare one (a type filter reaches the older rows of its type by index).
     */
    const assertFallback = async (hits: { id: string; score: number }[], whole: boolean) => {
      const byId = new Map(
        (
          await store.getMemories(
            'default',
            'big',
            hits.map((h) => h.id),
          )
        ).map((m) => [m.id, m.text]),
      );
      const got = hits.map((h) => Number(byId.get(h.id)?.slice(1)));
      assert.ok(
        got.every((i) => RARE.includes(i)),
        `only rare memories: ${got}`,
      );
      const scores = got.map((i) => cos(vector(i), query));
      assert.deepEqual(
        scores,
        [...scores].sort((a, b) => b - a),
        'best first',
      );
      const wanted = whole ? RARE : RARE.filter((i) => i >= SIZE - EXACT_FALLBACK_ROWS);
      assert.deepEqual(
        wanted.filter((i) => !got.includes(i)),
        [],
        `every rare one${whole ? '' : ' of the newest rows'}: ${got}`,
      );
    };

    for (const [name, filter, whole] of filters) {
      test(`${name} passing few memories: the exact answer among the rows searched (semantic search and every channel)`, async () => {
        await assertFallback(await store.semanticSearch('default', 'big', query, filter, LIMIT), whole);
        const all = await store.searchChannels(
          'default',
          'big',
          { vector: query, terms: [], window: null, graph: null },
          filter,
          LIMIT,
        );
        await assertFallback(all.semantic, whole);
      });
    }

    /** Rows of memories a statement read (run again with the walk set up as the search had it), and its plan. */
    const rowsRead = (statement: { sql: string; params: unknown[] }) =>
      db.transaction(async (tx) => {
        if (setUp) await tx.query(setUp.sql, setUp.params);
        const { sql, params } = statement;
        const [row] = await tx.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
          `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
          params,
        );
        const plan = (await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params))
          .map((r) => r['QUERY PLAN'])
          .join('\n');
        const scans = nodes(row!['QUERY PLAN'][0]!.Plan).filter((n) => n['Relation Name'] === 'memories');
        assert.ok(scans.length > 0, plan);
        assert.deepEqual(
          scans.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Node Type']),
          [],
          `memories only through indexes:\n${plan}`,
        );
        const read = scans.reduce(
          (a, n) =>
            a +
            (n['Actual Rows'] +
              (n['Rows Removed by Filter'] ?? 0) +
              (n['Rows Removed by Index Recheck'] ?? 0)) *
              n['Actual Loops'],
          0,
        );
        return { read, plan };
      });

    // Plans are checked on PostgreSQL, where deployments that grow to a million memories run.
    if (engine === 'postgres') {
      for (const [name, filter, whole] of filters) {
        test(`${name} passing few memories: the walk and the fallback read a bounded number of rows, through indexes`, async () => {
          for (const search of [
            () => store.semanticSearch('default', 'big', query, filter, LIMIT),
            () =>
              store.searchChannels(
                'default',
                'big',
                { vector: query, terms: [], window: null, graph: null },
                filter,
                LIMIT,
              ),
          ]) {
            statements = [];
            await search();
            assert.ok(statements.length >= 2, 'the walk came back short and the fallback ran');
            const walk = await rowsRead(statements[0]!);
            assert.ok(walk.read < SIZE / 2, `the walk read ${walk.read} rows of ${SIZE}:\n${walk.plan}`);
            const { read, plan } = await rowsRead(statements.at(-1)!);
            // The newest rows, and per type asked the older rows of that type, at most as many.
            const bound = EXACT_FALLBACK_ROWS * (whole ? 1 + new Set(filter.types).size : 1);
            assert.ok(read <= bound, `the fallback read ${read} rows of ${SIZE}:\n${plan}`);
            // A type's older rows come through migration 44's index, whatever the walk reached.
            if (whole)
              assert.match(plan, /memories_bank_type_seq/, `the older rows of the type by index:\n${plan}`);
          }
        });
      }
    }
  });
}
