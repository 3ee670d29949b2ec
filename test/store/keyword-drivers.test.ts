/**
 * The keyword function's first phase, by the number of words it reads in full (its drivers):
 * one or two are joined on the memory, three or more summed per memory (migration 42). Each
 * must give what the two-phase BM25 it implements gives, computed here from the texts: the
 * candidates are the best by the drivers' part of the score (ties: smaller id first), ranked by
 * the whole score (ties: larger id first). With and without a filter, which applies while
 * the postings are read.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { NewMemory } from '../../src/core/types.js';
import type { MemoryFilter } from '../../src/store/records.js';
import { B, DRIVER_POSTINGS, K1 } from '../../src/store/sql/search.js';
import type { Store } from '../../src/store/store.js';
import { ENGINES, openTestStore } from '../helpers/engines.js';
import { newMemory } from '../helpers/memory.js';

const P = 'default';
const BANK = 'drivers';
/** The function's fewest candidates (search.ts KEYWORD_CANDIDATES). */
const CANDIDATES = 100;

function mem(i: number): NewMemory {
  // 'amber' in 150 memories, 'basil' in 200, 'cedar' in 110; no memory holds all three, so every
  // score is a sum of at most two parts and adds up the same in any order.
  const words: string[] = [];
  const tf = i % 3 === 1 ? 2 : 1;
  if (i % 4 === 0) words.push(...Array(tf).fill('amber'));
  if (i % 3 === 0) words.push('basil');
  if (i % 5 === 0 && i % 12 !== 0) words.push(...Array(tf).fill('cedar'));
  words.push(...Array(i % 6).fill('pad'), `note${i}`);
  const terms = new Map<string, number>();
  for (const w of words) terms.set(w, (terms.get(w) ?? 0) + 1);
  const v = new Float32Array(8);
  v[0] = 1;
  return newMemory({
    text: words.join(' '),
    embedding: v,
    terms,
    tags: [`t${i % 2}`],
    mentioned_at: new Date('2024-01-01T00:00:00Z'),
  });
}

for (const engine of ENGINES) {
  describe(`keyword search by its drivers (${engine})`, () => {
    let s: Store & { dispose(): Promise<void> };
    let rows: NewMemory[] = [];
    before(async () => {
      s = await openTestStore(engine);
      await s.ensureBank(P, BANK, {});
      rows = Array.from({ length: 600 }, (_, i) => mem(i));
      await s.insertMemories(P, BANK, rows);
    });
    after(() => s.dispose());

    /** The two-phase BM25 of `terms` over the rows, as mnemo_keyword_search defines it. */
    async function expected(terms: string[], pass: (r: NewMemory) => boolean, limit: number) {
      const bank = (await s.getBank(P, BANK))!;
      const n = Math.max(bank.memory_count, 1);
      const avgdl = Math.max(bank.term_total / n, 1);
      const q = terms
        .map((t) => ({ t, df: rows.filter((r) => r.terms.has(t)).length }))
        .filter((x) => x.df > 0)
        .map((x) => ({ ...x, idf: Math.log(1 + (n - x.df + 0.5) / (x.df + 0.5)) }))
        .sort((a, b) => a.df - b.df || (a.t < b.t ? -1 : 1));
      assert.ok(q[0]!.df <= DRIVER_POSTINGS, 'the rarest word fits the driver budget');
      let running = 0;
      const drivers = q.filter((x, i) => {
        running += x.df;
        return i === 0 || running <= DRIVER_POSTINGS;
      });
      const part = (r: NewMemory, x: { t: string; idf: number }) => {
        const tf = r.terms.get(x.t) ?? 0;
        const dl = [...r.terms.values()].reduce((a, b) => a + b, 0);
        return tf ? (x.idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * dl) / avgdl)) : 0;
      };
      const sum = (r: NewMemory, xs: typeof q) => xs.reduce((a, x) => a + part(r, x), 0);
      const cand = rows
        .filter((r) => pass(r) && drivers.some((x) => r.terms.has(x.t)))
        .map((r) => ({ id: r.id, s1: sum(r, drivers) }))
        .sort((a, b) => b.s1 - a.s1 || (a.id < b.id ? -1 : 1))
        .slice(0, Math.max(limit, CANDIDATES));
      const rest = q.filter((x) => !drivers.includes(x));
      const mass = q.reduce((a, x) => a + x.idf, 0);
      return {
        drivers: drivers.length,
        hits: cand
          .map((c) => ({ id: c.id, bm25: c.s1 + sum(rows.find((r) => r.id === c.id)!, rest) }))
          .sort((a, b) => b.bm25 - a.bm25 || (b.id < a.id ? -1 : 1))
          .slice(0, limit)
          .map((e) => ({ id: e.id, score: Math.min(1, e.bm25 / mass) })),
      };
    }

    const cases: { terms: string[]; drivers: number }[] = [
      { terms: ['amber'], drivers: 1 },
      { terms: ['amber', 'nowhere'], drivers: 1 },
      { terms: ['basil', 'amber'], drivers: 2 },
      { terms: ['cedar', 'basil'], drivers: 2 },
      { terms: ['amber', 'basil', 'cedar'], drivers: 3 },
    ];
    const filters: { name: string; filter: MemoryFilter; pass: (r: NewMemory) => boolean }[] = [
      { name: 'no filter', filter: {}, pass: () => true },
      {
        name: 'a tag filter',
        filter: { tags: ['t1'], tagsMatch: 'any_strict' },
        pass: (r) => r.tags.includes('t1'),
      },
    ];
    for (const c of cases)
      for (const f of filters)
        test(`${c.terms.join(' ')}: ${c.drivers} driver(s), ${f.name}`, async () => {
          const want = await expected(c.terms, f.pass, 20);
          assert.equal(want.drivers, c.drivers);
          const hits = await s.keywordSearch(P, BANK, c.terms, f.filter, 20);
          assert.deepEqual(
            hits.map((h) => h.id),
            want.hits.map((h) => h.id),
          );
          for (const [i, h] of hits.entries())
            assert.ok(Math.abs(h.score - want.hits[i]!.score) < 1e-12, `score ${i}`);
        });
  });
}
