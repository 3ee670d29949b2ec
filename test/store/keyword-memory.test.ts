/**
 * The keyword channel computed in the process from a copy of a bank's postings
 * (`src/store/keyword-memory.ts`): the SQL function's hits, ids, order and scores (to the last bit
 * where the function's plan allows, see `nearly`), in each form of phase 1 (one or two drivers
 * joined, three or more summed, every word past the budget). And the copy only ever answers at
 * the version it was read at: a write through any store is seen by the next search, a filter
 * goes to SQL, a bank over the bound is never copied, and the least recently searched is dropped.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { NewMemory } from '../../src/core/types.js';
import type { Db } from '../../src/store/db.js';
import { BankChanged, loadKeywordIndex } from '../../src/store/keyword-index.js';
import { KeywordMemory } from '../../src/store/keyword-memory.js';
import {
  type KeywordPath,
  keywordFilterOf,
  searchKeywordIndex,
} from '../../src/store/keyword-memory-search.js';
import { storeOver, storeWith } from '../../src/store/open.js';
import type { MemoryFilter } from '../../src/store/records.js';
import { B, K1 } from '../../src/store/sql/search.js';
import type { Store } from '../../src/store/store.js';
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
    // What the filters read, varied: types, tags (none too), documents (none too), days.
    type: i % 3 ? 'world' : 'experience',
    tags: [[], ['t0'], ['t1'], ['t0', 't1'], ['t2']][i % 5]!,
    document_id: i % 4 ? null : `doc${i % 3}`,
    mentioned_at: new Date(Date.UTC(2024, 0, 1 + (i % 40), 0, 0, 0, i)),
  });
}

/** Filters of every kind the keyword function takes, alone and together. */
const FILTERS: MemoryFilter[] = [
  {},
  { types: ['experience'] },
  { types: ['world', 'observation'] },
  ...(['any', 'all', 'any_strict', 'all_strict', 'exact'] as const).flatMap((tagsMatch) => [
    { tags: ['t0'], tagsMatch },
    { tags: ['t0', 't1'], tagsMatch },
  ]),
  { documentId: 'doc1' },
  { documentId: 'nowhere' },
  { mentionedBefore: new Date(Date.UTC(2024, 0, 20, 0, 0, 0, 100)) },
  {
    types: ['world'],
    tags: ['t1'],
    tagsMatch: 'any_strict',
    mentionedBefore: new Date(Date.UTC(2024, 0, 30)),
  },
];

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
      const s = storeOver(db, { keywordCacheMb: 0 });
      await s.ensureBank(P, BANK, {});
      const random = seeded(7);
      const rows = Array.from({ length: SIZE }, (_, i) => mem(i, random));
      for (let i = 0; i < rows.length; i += 350) await s.insertMemories(P, BANK, rows.slice(i, i + 350));
      await s.maintainStatistics();
    });
    after(() => dispose());

    test('the hits and scores of the SQL function in every form of phase 1 and with every filter, most to the last bit', async () => {
      const index = (await loadKeywordIndex(db, P, BANK))!;
      const random = seeded(11);
      const paths: Record<KeywordPath, number> = { none: 0, pair: 0, summed: 0, capped: 0 };
      let exact = 0;
      let compared = 0;
      const narrowed = new Set<number>();
      for (let i = 0; i < 60; i++) {
        const terms = [
          ...new Set(Array.from({ length: 2 + (i % 9) }, () => WORDS[Math.floor(random() * WORDS.length)]!)),
        ];
        if (i % 5 === 0) terms.push(`own${i}`, 'unknown');
        // Every third term set under every filter, the others unfiltered.
        for (const [k, filter] of (i % 3 ? [FILTERS[0]!] : FILTERS).entries()) {
          const f = keywordFilterOf(filter);
          // Budgets for each form: the rarer words within it, few within it, none.
          for (const budget of [400, 150, 40]) {
            const limit = i % 2 ? 30 : 100;
            const o = { limit, candidates: 100, driverPostings: budget, k1: K1, b: B };
            const want = await db.query<{ id: string; score: number }>(
              `SELECT memory_id::text AS id, score::float8::text AS score FROM mnemo_keyword_search($1, $2, $3::text[],
                 $4::int, 100, $5::int, $6::float8, $7::float8, $8::text[], $9::text[], $10::text, $11::text, $12::timestamptz)`,
              [
                P,
                BANK,
                terms,
                limit,
                budget,
                K1,
                B,
                f.types,
                f.tags,
                filter.tagsMatch ?? 'any',
                f.documentId,
                f.mentionedBefore,
              ],
            );
            const got = searchKeywordIndex(index, terms, o, filter);
            const sql = want.map((h) => ({ id: h.id, score: Number(h.score) }));
            paths[got.path]++;
            compared++;
            if (JSON.stringify(got.hits) === JSON.stringify(sql)) exact++;
            if (
              k > 0 &&
              JSON.stringify(got.hits) !== JSON.stringify(searchKeywordIndex(index, terms, o).hits)
            )
              narrowed.add(k);
            assert.deepEqual(
              nearly(got.hits),
              nearly(sql),
              `${terms.join(' ')}, budget ${budget} (${got.path}), filter ${JSON.stringify(filter)}`,
            );
          }
        }
      }
      for (const p of ['pair', 'summed', 'capped'] as const)
        assert.ok(paths[p] >= 10, `${p}: ${paths[p]} sets`);
      assert.equal(narrowed.size, FILTERS.length - 1, 'every filter left some memories out');
      // Most are equal float for float; the others differ in the last bit (see `nearly`).
      assert.ok(exact >= compared / 2, `${exact} of ${compared} exactly equal`);
    });

    /** Every channel of `q` in a snapshot of `s`, opened as Recall opens it (the bank's version read). */
    const search = (s: Store, terms: string[], filter: MemoryFilter = {}, bank = BANK) =>
      s.readSnapshot(async (x) =>
        x.searchChannels(
          P,
          bank,
          { vector: null, terms, window: null, graph: null },
          filter,
          50,
          await x.openBankSearch(P, bank, 0, 50),
        ),
      );
    const TERMS = ['w3', 'w0', 'w17', 'w9', 'w22'];

    test('a loaded copy answers with the SQL hits, filtered or not', async () => {
      const keywords = new KeywordMemory(db, 2 ** 26, { loadAfter: 2, loadSpacing: 0 });
      const on = storeWith(db, keywords);
      const off = storeOver(db, { keywordCacheMb: 0 });
      const sql = await search(off, TERMS);
      assert.equal(sql.keyword.length, 50);
      // Searched twice at one version: loaded in the background; the searches meanwhile in SQL.
      assert.deepEqual(await search(on, TERMS), sql);
      assert.deepEqual(await search(on, TERMS), sql);
      await keywords.idle();
      assert.deepEqual(keywords.stats(), { ...keywords.stats(), banks: 1, hits: 0, misses: 2, loads: 1 });
      const copied = await search(on, TERMS);
      assert.equal(keywords.stats().hits, 1, 'answered by the copy');
      assert.deepEqual(nearly(copied.keyword), nearly(sql.keyword));
      const filter = { tags: ['t1'], tagsMatch: 'any_strict' as const };
      const filtered = await search(on, TERMS, filter);
      assert.equal(keywords.stats().hits, 2, 'a filtered search too');
      assert.deepEqual(nearly(filtered.keyword), nearly((await search(off, TERMS, filter)).keyword));
      assert.notDeepEqual(filtered.keyword, copied.keyword, 'the filter applied');
    });

    test('a write through another store is seen by the next search, and the copy catches up', async () => {
      // A search answered saves nothing here: a copy that goes stale was never worth its load.
      const keywords = new KeywordMemory(db, 2 ** 26, { loadAfter: 2, loadSpacing: 0, searchSavingMs: 0 });
      const on = storeWith(db, keywords);
      // Another process's store: its own copies, the same database.
      const other = storeOver(db, { keywordCacheMb: 0 });
      const terms = ['w28', 'w29', 'fresh'];
      await search(on, terms);
      await search(on, terms);
      await keywords.idle();
      const before = await search(on, terms);
      assert.equal(keywords.stats().hits, 1);
      const added = newMemory({
        text: 'fresh w28 w29',
        embedding: new Float32Array([1, 0, 0]),
        terms: new Map([
          ['fresh', 3],
          ['w28', 2],
          ['w29', 2],
        ]),
        mentioned_at: new Date('2024-01-02T00:00:00Z'),
      });
      assert.equal(await other.insertMemories(P, BANK, [added]), 1);
      const id = added.id;
      const seen = await search(on, terms);
      assert.equal(seen.keyword[0]?.id, id, 'the new memory first, at once');
      assert.equal(keywords.stats().hits, 1, 'searched in SQL: the copy is of the old version');
      assert.notDeepEqual(seen.keyword, before.keyword);
      assert.equal(keywords.stats().banks, 0, 'the stale copy is dropped');
      // It went stale before it saved what its load cost: the bank now needs four searches at
      // one version, twice the two that loaded it.
      for (let i = 0; i < 2; i++) await search(on, terms);
      await keywords.idle();
      assert.equal(keywords.stats().loads, 1);
      await search(on, terms);
      await keywords.idle();
      assert.equal(keywords.stats().loads, 2);
      const caught = await search(on, terms);
      assert.equal(keywords.stats().hits, 2, 'the copy reloaded at the new version');
      assert.deepEqual(nearly(caught.keyword), nearly(seen.keyword));
      assert.ok(await other.deleteMemory(P, BANK, id));
      const forgotten = await search(on, terms);
      assert.ok(!forgotten.keyword.some((h) => h.id === id), 'a forgotten memory is gone at once');
      assert.deepEqual(forgotten.keyword, (await search(other, terms)).keyword);
    });

    test("channels sent with the snapshot's first statement, the copy gone stale meanwhile: the keyword channel searched again", async () => {
      const keywords = new KeywordMemory(db, 2 ** 26, { loadAfter: 1, loadSpacing: 0, searchSavingMs: 0 });
      const on = storeWith(db, keywords);
      const other = storeOver(db, { keywordCacheMb: 0 });
      const terms = ['w27', 'w29', 'later'];
      // Written for the bank's current copy (`openSearchChannels`), checked against the snapshot's version.
      const sent = async (s: Store) =>
        (
          await s.readSnapshot((x) =>
            x.openSearchChannels(P, BANK, { vector: null, terms, window: null, graph: null }, {}, 50, SIZE),
          )
        ).hits!;
      await sent(on);
      await keywords.idle();
      const copied = await sent(on);
      assert.equal(keywords.stats().hits, 1, 'answered by the copy');
      assert.deepEqual(nearly(copied.keyword), nearly((await search(other, terms)).keyword));
      const added = newMemory({
        text: 'later w27 w29',
        embedding: new Float32Array([1, 0, 0]),
        terms: new Map([
          ['later', 3],
          ['w27', 2],
          ['w29', 2],
        ]),
        mentioned_at: new Date('2024-01-03T00:00:00Z'),
      });
      assert.equal(await other.insertMemories(P, BANK, [added]), 1);
      try {
        const seen = await sent(on);
        assert.equal(seen.keyword[0]?.id, added.id, 'the new memory first, at once');
        assert.deepEqual(seen.keyword, (await search(other, terms)).keyword);
        assert.equal(keywords.stats().banks, 0, 'the stale copy is dropped');
      } finally {
        assert.ok(await other.deleteMemory(P, BANK, added.id));
      }
    });

    test('a copy that saved what its load cost leaves its bank loading as soon as before', async () => {
      const keywords = new KeywordMemory(db, 2 ** 26, { loadAfter: 2, loadSpacing: 0, searchSavingMs: 1e9 });
      const on = storeWith(db, keywords);
      const terms = ['w27', 'again'];
      for (let i = 0; i < 2; i++) await search(on, terms);
      await keywords.idle();
      await search(on, terms);
      assert.deepEqual(keywords.stats(), { ...keywords.stats(), hits: 1, loads: 1 });
      const added = newMemory({
        text: 'again w27',
        embedding: new Float32Array([1, 0, 0]),
        terms: new Map([
          ['again', 1],
          ['w27', 1],
        ]),
      });
      await storeOver(db, { keywordCacheMb: 0 }).insertMemories(P, BANK, [added]);
      for (let i = 0; i < 2; i++) await search(on, terms);
      await keywords.idle();
      assert.equal(keywords.stats().loads, 2, 'two searches at the new version loaded it again');
      assert.equal((await search(on, terms)).keyword[0]?.id, added.id);
      assert.equal(keywords.stats().hits, 2);
    });

    test('a load reads in pages at one version, and gives up when the bank is written meanwhile', async () => {
      const whole = (await loadKeywordIndex(db, P, BANK))!;
      const paged = (await loadKeywordIndex(db, P, BANK, Number.POSITIVE_INFINITY, 300, 100))!;
      assert.ok(whole.doc.length > 3000, `${whole.doc.length} postings: many pages of 300`);
      assert.ok(whole.memories.length > 600, `${whole.memories.length} memories: pages of 100`);
      assert.deepEqual(paged, whole);
      // A write lands after the load's first snapshot.
      let snapshots = 0;
      const writing: Db = {
        ...db,
        transaction: async (fn, mode) => {
          const done = await db.transaction(fn, mode);
          if (mode === 'snapshot' && ++snapshots === 1)
            await storeOver(db, { keywordCacheMb: 0 }).insertMemories(P, BANK, [mem(SIZE + 1, seeded(9))]);
          return done;
        },
      };
      await assert.rejects(loadKeywordIndex(writing, P, BANK), BankChanged);
      const keywords = new KeywordMemory(writing, 2 ** 26, { loadAfter: 1, loadSpacing: 0 });
      snapshots = 0;
      await search(storeWith(db, keywords), TERMS);
      await keywords.idle();
      assert.deepEqual(keywords.stats(), {
        ...keywords.stats(),
        banks: 0,
        loads: 1,
        abandoned: 1,
        failed: 0,
      });
      // Not held back: the next search at the new version loads it.
      await search(storeWith(db, keywords), TERMS);
      await keywords.idle();
      assert.deepEqual(keywords.stats(), { ...keywords.stats(), banks: 1, loads: 2, abandoned: 1 });
    });

    test("a Recall's candidates from a copy: the statement's rows and similarities, at the copy's version only", async () => {
      const bank = 'kw-rows';
      const off = storeOver(db, { keywordCacheMb: 0 });
      await off.ensureBank(P, bank, {});
      const v = (...x: number[]) => new Float32Array(x);
      // Every field a candidate carries, varied: entities, context, tags, metadata, dates, a
      // document; vectors of the query's size, of another size (no similarity), and zero (NaN).
      const rows = [
        newMemory({
          text: 'Alice adopted a beagle named Pepper',
          embedding: v(0.3, -0.2, 0.9),
          terms: new Map([['pepper', 1]]),
          context: 'a walk in the park',
          entities: [
            { text: 'Alice', type: 'person' },
            { text: 'Pepper', type: 'animal' },
          ],
          tags: ['pets', 'alice'],
          metadata: { session_id: 's1', nested: { n: 1, list: [1, 'two'] } },
          occurred_start: new Date('2024-03-01T10:00:00.123Z'),
          occurred_end: new Date('2024-03-02T00:00:00Z'),
          mentioned_at: new Date('2024-03-05T08:30:00.456Z'),
          document_id: 'doc-a',
          chunk_id: 'doc-a:0',
        }),
        newMemory({ text: 'other size', embedding: v(1, 0), terms: new Map([['other', 1]]) }),
        newMemory({ text: 'zero vector', embedding: v(0, 0, 0), terms: new Map([['zero', 1]]) }),
        ...Array.from({ length: 20 }, (_, i) =>
          newMemory({
            text: `plain ${i}`,
            embedding: v(Math.sin(i), Math.cos(i), i / 7),
            terms: new Map([[`plain${i}`, 1]]),
            type: i % 2 ? 'experience' : 'world',
          }),
        ),
      ];
      await off.insertMemories(P, bank, rows);
      const gone = rows[5]!.id;
      assert.equal(
        (await off.curateMemory(P, bank, gone, { state: 'invalidated', reason: 'wrong' })).done,
        true,
      );
      const keywords = new KeywordMemory(db, 2 ** 26, { loadAfter: 1, loadSpacing: 0 });
      const on = storeWith(db, keywords);
      await search(on, ['pepper'], {}, bank);
      await keywords.idle();
      assert.equal(keywords.stats().banks, 1, 'the bank copied');
      const version = (await on.readSnapshot((x) => x.openBankSearch(P, bank, 3, 50))).version!;
      const query = v(0.5, 0.1, -0.4);
      const ids = rows.map((r) => r.id).filter((id) => id !== gone);
      const byId = <T extends { id: string }>(list: T[] | null) =>
        [...(list ?? [])].sort((a, b) => (a.id < b.id ? -1 : 1));
      const sql = byId(await off.getCandidatesAt(P, bank, ids, query, version));
      const copied = byId(await on.getCandidatesAt(P, bank, ids, query, version));
      assert.equal(keywords.stats().candidates, 1, 'read from the copy');
      assert.equal(copied.length, ids.length);
      for (const [i, want] of sql.entries()) {
        const { similarity: got, ...fields } = copied[i]!;
        const { similarity, ...wanted } = want;
        assert.deepEqual(fields, wanted);
        if (similarity === null || Number.isNaN(similarity)) assert.deepEqual(got, similarity);
        else assert.ok(Math.abs(got! - similarity) < 1e-6, `${got} against ${similarity}`);
      }
      const alice = copied.find((m) => m.id === rows[0]!.id)!;
      assert.deepEqual(alice.entities, ['Alice', 'Pepper']);
      assert.ok(alice.similarity! < 0, 'a real cosine');
      assert.equal(copied.find((m) => m.id === rows[1]!.id)!.similarity, null, 'another size');
      assert.ok(Number.isNaN(copied.find((m) => m.id === rows[2]!.id)!.similarity), 'a zero vector');
      // Each Recall gets objects of its own: what one changes, the next does not see.
      const mine = byId(await on.getCandidatesAt(P, bank, ids, query, version));
      mine[0]!.text = 'changed';
      assert.deepEqual(byId(await on.getCandidatesAt(P, bank, ids, query, version)), copied);
      // An invalidated memory is no candidate: neither the copy nor the statement gives any.
      assert.equal(await on.getCandidatesAt(P, bank, [...ids, gone], query, version), null);
      assert.equal(keywords.stats().candidates, 3, 'not read from the copy');
      // Written since: the copy still gives the old version's candidates (what the channels read
      // there), and the new version's come from the statement.
      const added = newMemory({ text: 'added later', embedding: v(1, 1, 1), terms: new Map([['added', 1]]) });
      await off.insertMemories(P, bank, [added]);
      assert.equal(await off.getCandidatesAt(P, bank, ids, query, version), null, 'the statement: moved on');
      assert.deepEqual(byId(await on.getCandidatesAt(P, bank, ids, query, version)), copied);
      assert.equal(keywords.stats().candidates, 4);
      const now = (await on.readSnapshot((x) => x.openBankSearch(P, bank, 3, 50))).version!;
      assert.notEqual(now, version);
      assert.equal(
        (await on.getCandidatesAt(P, bank, [...ids, added.id], query, now))!.length,
        ids.length + 1,
      );
      assert.equal(keywords.stats().candidates, 4, 'the copy is of the old version');
    });

    test('a bank over the bound is searched in SQL; the least recently searched copy goes first', async () => {
      const tiny = new KeywordMemory(db, 1000, { loadAfter: 1, loadSpacing: 0 });
      const s = storeWith(db, tiny);
      const want = await search(storeOver(db, { keywordCacheMb: 0 }), TERMS);
      await search(s, TERMS);
      await tiny.idle();
      assert.deepEqual(await search(s, TERMS), want);
      assert.deepEqual(tiny.stats(), { ...tiny.stats(), banks: 0, bytes: 0, hits: 0, loads: 1, skipped: 1 });

      const other = 'kw-memory-2';
      const s2 = storeOver(db, { keywordCacheMb: 0 });
      await s2.ensureBank(P, other, {});
      await s2.insertMemories(P, other, [mem(0, seeded(3)), mem(1, seeded(5))]);
      const first = new KeywordMemory(db, 2 ** 26, { loadAfter: 1, loadSpacing: 0 });
      const big = (await loadKeywordIndex(db, P, BANK))!;
      // Room for the big bank's copy and not for another besides.
      const one = new KeywordMemory(db, big.bytes + 100, { loadAfter: 1, loadSpacing: 0 });
      for (const k of [first, one]) {
        const store = storeWith(db, k);
        await search(store, TERMS, {}, other);
        await k.idle();
        await search(store, TERMS);
        await k.idle();
      }
      assert.equal(first.stats().banks, 2);
      assert.equal(one.stats().banks, 1, 'the small bank went to make room');
      assert.ok(one.stats().bytes <= big.bytes + 100);
      await search(storeWith(db, one), TERMS);
      assert.equal(one.stats().hits, 1, 'the big bank is the one kept');
    });
  });
}
