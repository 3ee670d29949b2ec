/**
 * EXPERIMENT (issue 20): the keyword channel computed in the process from a bank's postings
 * (`src/store/keyword-memory.ts`) gives the SQL function's hits: the same ids, order and scores
 * (to the last bit where the function's plan allows, see `nearly`), in each form of phase 1 (one or two drivers joined, three or more summed,
 * every word past the budget), over a bank whose memories share many words. And the channels
 * statement with it on gives the keyword hits it gives with it off; a filter still goes to SQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { NewMemory } from '../../src/core/types.js';
import type { Db } from '../../src/store/db.js';
import { keywordMemory, loadKeywordIndex } from '../../src/store/keyword-memory.js';
import { type KeywordPath, searchKeywordIndex } from '../../src/store/keyword-memory-search.js';
import { storeOver } from '../../src/store/open.js';
import { B, K1 } from '../../src/store/sql/search.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import { newMemory } from '../helpers/memory.js';

const P = 'default';
const BANK = 'kw-memory';
const SIZE = 700;
const WORDS = Array.from({ length: 30 }, (_, i) => `w${i}`);

/** A seeded generator (the same bank and term sets on every run). */
function seeded(seed: number) {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x / 2 ** 31;
  };
}

/** Memory `i`: words drawn with falling frequency (w0 in most, w29 in few), tf 1 to 3, and a word of its own. */
function mem(i: number, random: () => number): NewMemory {
  const terms = new Map<string, number>([[`own${i}`, 1]]);
  for (const [k, w] of WORDS.entries())
    if (random() < 0.6 / (1 + k / 3)) terms.set(w, 1 + Math.floor(random() * random() * 3));
  return newMemory({
    text: [...terms.keys()].join(' '),
    embedding: new Float32Array([1, 0, 0]),
    terms,
    tags: [`t${i % 2}`],
    mentioned_at: new Date('2024-01-01T00:00:00Z'),
  });
}

/**
 * Hits with their scores to 12 places, best first, ties by id descending (the function's order).
 * The function's own last bit depends on its plan: the order it reads the query's terms in (the
 * key's order in an index scan, the rows' order on their pages in a bitmap scan, which a small
 * bank gets) and the order a sort leaves a memory's parts in before phase 1 sums three or more.
 * The bench bank's plan reads them in key order, and there the hits are the same floats
 * (bench/keyword-memory.ts); here two memories a bit apart can come out as equal or swapped.
 */
const nearly = (hits: { id: string; score: number }[]) =>
  hits
    .map((h) => ({ id: h.id, score: Math.round(h.score * 1e12) / 1e12 }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? 1 : -1));

for (const engine of ENGINES) {
  describe(`keyword search in the process (${engine})`, () => {
    let db: Db;
    let dispose: () => Promise<void>;
    before(async () => {
      ({ db, dispose } = await openTestDb(engine));
      const s = storeOver(db, null);
      await s.ensureBank(P, BANK, {});
      const random = seeded(7);
      const rows = Array.from({ length: SIZE }, (_, i) => mem(i, random));
      for (let i = 0; i < rows.length; i += 350) await s.insertMemories(P, BANK, rows.slice(i, i + 350));
      await s.maintainStatistics();
    });
    after(() => dispose());

    test('the hits and scores of the SQL function in every form of phase 1, most to the last bit', async () => {
      const index = await db.transaction((tx) => loadKeywordIndex(tx, P, BANK), 'snapshot');
      const random = seeded(11);
      const paths: Record<KeywordPath, number> = { none: 0, pair: 0, summed: 0, capped: 0 };
      let exact = 0;
      for (let i = 0; i < 60; i++) {
        const terms = [
          ...new Set(Array.from({ length: 2 + (i % 9) }, () => WORDS[Math.floor(random() * WORDS.length)]!)),
        ];
        if (i % 5 === 0) terms.push(`own${i}`, 'unknown');
        // Budgets for each form: the rarer words within it, few within it, none.
        for (const budget of [400, 150, 40]) {
          const limit = i % 2 ? 30 : 100;
          const o = { limit, candidates: 100, driverPostings: budget, k1: K1, b: B };
          const want = await db.query<{ id: string; score: number }>(
            `SELECT memory_id::text AS id, score::float8::text AS score FROM mnemo_keyword_search($1, $2, $3::text[],
               $4::int, 100, $5::int, $6::float8, $7::float8, NULL, NULL, 'any', NULL, NULL)`,
            [P, BANK, terms, limit, budget, K1, B],
          );
          const got = searchKeywordIndex(index, terms, o);
          const sql = want.map((h) => ({ id: h.id, score: Number(h.score) }));
          paths[got.path]++;
          if (JSON.stringify(got.hits) === JSON.stringify(sql)) exact++;
          assert.deepEqual(
            nearly(got.hits),
            nearly(sql),
            `${terms.join(' ')}, budget ${budget} (${got.path})`,
          );
        }
      }
      for (const p of ['pair', 'summed', 'capped'] as const)
        assert.ok(paths[p] >= 10, `${p}: ${paths[p]} sets`);
      // Most are equal float for float; the others differ in the last bit (see `nearly`).
      assert.ok(exact >= 90, `${exact} of 180 exactly equal`);
    });

    test('the channels statement gives the same keyword hits with it on; a filter goes to SQL', async () => {
      const on = storeOver(db, keywordMemory());
      const off = storeOver(db, null);
      const q = { vector: null, terms: ['w3', 'w0', 'w17', 'w9', 'w22'], window: null, graph: null };
      const search = (s: typeof on, filter: object) =>
        s.readSnapshot((x) => x.searchChannels(P, BANK, q, filter, 50));
      const plain = await search(on, {});
      assert.equal(plain.keyword.length, 50);
      const sql = await search(off, {});
      assert.deepEqual(nearly(plain.keyword), nearly(sql.keyword));
      assert.deepEqual({ ...plain, keyword: [] }, { ...sql, keyword: [] });
      const filter = { tags: ['t1'], tagsMatch: 'any_strict' as const };
      const filtered = await search(on, filter);
      assert.deepEqual(filtered, await search(off, filter));
      assert.notDeepEqual(filtered.keyword, plain.keyword, 'the filter applied');
    });
  });
}
