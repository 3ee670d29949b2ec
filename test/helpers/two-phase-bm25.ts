/**
 * The two-phase BM25 that `mnemo_keyword_search` implements, computed from the memories' terms:
 * the reference keyword tests compare the function with. The drivers (rarest words within
 * DRIVER_POSTINGS) pick the candidates, the best by their part of the score (ties: smaller id
 * first); every word then scores them, best first (ties: larger id first).
 */
import assert from 'node:assert/strict';
import type { NewMemory } from '../../src/core/types.js';
import { B, DRIVER_POSTINGS, K1 } from '../../src/store/sql/search.js';
import type { Store } from '../../src/store/store.js';

/** The function's fewest candidates (search.ts KEYWORD_CANDIDATES). */
export const CANDIDATES = 100;

/** The hits of `terms` over `rows` (the bank's memories) among those `pass` accepts, and the words that drove phase 1. */
export async function twoPhaseBm25(
  s: Store,
  bank: { projectId: string; bankId: string },
  rows: NewMemory[],
  terms: string[],
  pass: (r: NewMemory) => boolean,
  limit: number,
): Promise<{ drivers: number; rest: number; hits: { id: string; score: number }[] }> {
  const b = (await s.getBank(bank.projectId, bank.bankId))!;
  const n = Math.max(b.memory_count, 1);
  const avgdl = Math.max(b.term_total / n, 1);
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
    rest: rest.length,
    hits: cand
      .map((c) => ({ id: c.id, bm25: c.s1 + sum(rows.find((r) => r.id === c.id)!, rest) }))
      .sort((a, b) => b.bm25 - a.bm25 || (b.id < a.id ? -1 : 1))
      .slice(0, limit)
      .map((e) => ({ id: e.id, score: Math.min(1, e.bm25 / mass) })),
  };
}

/** Fails unless `hits` are `want`'s: the same ids in the same order, each score within 1e-12. */
export function assertSameHits(
  hits: { id: string; score: number }[],
  want: { id: string; score: number }[],
): void {
  assert.deepEqual(
    hits.map((h) => h.id),
    want.map((h) => h.id),
  );
  for (const [i, h] of hits.entries()) assert.ok(Math.abs(h.score - want[i]!.score) < 1e-12, `score ${i}`);
}
