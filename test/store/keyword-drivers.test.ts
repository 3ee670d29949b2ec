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
import type { Store } from '../../src/store/store.js';
import { ENGINES, openTestStore } from '../helpers/engines.js';
import { newMemory } from '../helpers/memory.js';
import { assertSameHits, twoPhaseBm25 } from '../helpers/two-phase-bm25.js';

const P = 'default';
const BANK = 'drivers';
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
          const want = await twoPhaseBm25(s, { projectId: P, bankId: BANK }, rows, c.terms, f.pass, 20);
          assert.equal(want.drivers, c.drivers);
          const hits = await s.keywordSearch(P, BANK, c.terms, f.filter, 20);
          assertSameHits(hits, want.hits);
        });
  });
}
