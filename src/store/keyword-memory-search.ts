/**
 * `mnemo_keyword_search` (migration 54) over a `KeywordIndex` in this process. Every float is
 * computed as the function computes it: a posting's part is
 * `idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))` in that order, phase 2 sums a
 * candidate's words in the query terms' order
 * (the function's `rest` numbered in `q`'s order, which an index scan of `bank_terms` gives: the
 * database's term order, which the index's term numbers follow), and the IDF mass in that order
 * too. Two orders are the function's plan's, not reproducible here: a bitmap scan of `bank_terms`
 * (a small bank's plan) reads the terms in the order of their rows on the page, and the summed
 * phase 1 (three or more drivers, or every word past the budget) adds a memory's parts in the order
 * a sort of its rows leaves them; here they are added in the readers' order. Where they differ, a
 * score can differ in its last bit (with two parts a sum is the same either way).
 */
import type { Hit, MemoryFilter } from './records.js';
import type { KeywordIndex } from './keyword-index.js';

export interface KeywordSearchOptions {
  /** `p_limit`, `p_candidates` and `p_driver_postings` of the function. */
  limit: number;
  candidates: number;
  driverPostings: number;
  k1: number;
  b: number;
}

/** Which form of phase 1 ran (for tests and benches). */
export type KeywordPath = 'none' | 'pair' | 'summed' | 'capped';

interface QueryTerm {
  t: number;
  df: number;
  idf: number;
}

/** Top `count` of `docs` by `score` descending, ties by id ascending (the function's `cand`). */
function top(docs: number[], score: Float64Array, count: number): number[] {
  docs.sort((a, b) => score[b]! - score[a]! || a - b);
  return docs.length > count ? docs.slice(0, count) : docs;
}

/** The hits of `terms` (deduplicated by the caller), best first, and the form of phase 1 that ran. */
export function searchKeywordIndex(
  ix: KeywordIndex,
  terms: readonly string[],
  o: KeywordSearchOptions,
  filter: MemoryFilter = {},
): { hits: Hit[]; path: KeywordPath } {
  const passes = memoryTest(ix, filter);
  const { k1, b, driverPostings } = o;
  const { avgdl } = ix;
  const part = (idf: number, tf: number, dl: number) =>
    (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * (Number.isNaN(dl) ? avgdl : dl)) / avgdl));
  // q: the known terms in the database's order of them.
  const q: QueryTerm[] = [];
  for (const term of terms) {
    const t = ix.terms.get(term);
    if (t !== undefined) q.push({ t, df: ix.df[t]!, idf: ix.idf[t]! });
  }
  if (q.length === 0) return { hits: [], path: 'none' };
  q.sort((x, y) => x.t - y.t);
  const byRarity = [...q].sort((x, y) => x.df - y.df || x.t - y.t);
  let running = 0;
  const drivers = byRarity.filter((x, i) => {
    running += x.df;
    return i === 0 || running <= driverPostings;
  });
  const capped = byRarity[0]!.df > driverPostings;
  const pair = !capped && drivers.length <= 2;

  // Phase 1: each touched memory's s1 in `scratch`, the memories in `touched`.
  const s1 = ix.scratch;
  const touched: number[] = [];
  const readers = capped ? q : drivers;
  const each = capped ? Math.max(Math.trunc(driverPostings / q.length), 1) : Number.POSITIVE_INFINITY;
  for (const r of readers) {
    // The first `each` postings (in impact order) that pass the filter, as the function's LIMIT.
    let taken = 0;
    for (let i = ix.start[r.t]!; i < ix.start[r.t + 1]! && taken < each; i++) {
      const d = ix.doc[i]!;
      if (passes && !passes(d)) continue;
      taken++;
      const s = part(r.idf, ix.tf[i]!, ix.dl[i]!);
      if (Number.isNaN(s1[d]!)) {
        s1[d] = s;
        touched.push(d);
      } else s1[d] = s1[d]! + s;
    }
  }
  const cand = top(touched, s1, o.candidates);

  // Phase 2: the words phase 1 did not read in full, each candidate's in `q`'s order.
  const restK = new Map<number, number>();
  const driven = new Set(drivers);
  for (const x of q) if (capped || !driven.has(x)) restK.set(x.t, restK.size);
  const slots = new Float64Array(restK.size);
  const bm25 = new Float64Array(cand.length);
  for (const [c, d] of cand.entries()) {
    slots.fill(Number.NaN);
    for (let i = ix.docStart[d]!; i < ix.docStart[d + 1]!; i++) {
      const k = restK.get(ix.docTerm[i]!);
      if (k !== undefined) slots[k] = part(ix.idf[ix.docTerm[i]!]!, ix.docTf[i]!, ix.docDl[i]!);
    }
    let s2: number | null = null;
    for (const v of slots) if (!Number.isNaN(v)) s2 = s2 === null ? v : s2 + v;
    bm25[c] = (capped ? 0 : s1[d]!) + (s2 ?? 0);
  }
  let mass = 0;
  for (const [i, x] of q.entries()) mass = i === 0 ? x.idf : mass + x.idf;
  // Left as found (all NaN) for the next search: this one ran to here without yielding.
  for (const d of touched) s1[d] = Number.NaN;

  const order = cand.map((_, c) => c);
  order.sort((x, y) => bm25[y]! - bm25[x]! || cand[y]! - cand[x]!);
  const hits = order
    .slice(0, o.limit)
    .map((c) => ({ id: ix.ids[cand[c]!]!, score: Math.min(1, bm25[c]! / mass) }));
  return { hits, path: capped ? 'capped' : pair ? 'pair' : 'summed' };
}

/**
 * The function's memory filter (`memoryFilter` in migrations/keyword-search.ts) over the copy's
 * attributes, as a test of memory `d`; null when `filter` narrows nothing (the function's
 * `filtered` false). A NULL in the database fails every comparison, as there.
 */
export function memoryTest(ix: KeywordIndex, filter: MemoryFilter): ((d: number) => boolean) | null {
  const { types, tags, documentId, mentionedBefore } = keywordFilterOf(filter);
  if (!types && !tags && documentId === null && !mentionedBefore) return null;
  const typeCodes = types && new Set(types.flatMap((t) => ix.typeNames.indexOf(t)));
  // -2: a document the bank has none of; -1 is a memory's "no document".
  const document = documentId === null ? null : (ix.documentIds.get(documentId) ?? -2);
  const before = mentionedBefore ? mentionedBefore.getTime() * 1000 : null;
  const wanted = tags && new Set(tags);
  const match = filter.tagsMatch ?? 'any';
  const tagged = (have: readonly string[]): boolean => {
    if (!wanted) return false;
    const hasAll = [...wanted].every((t) => have.includes(t));
    switch (match) {
      case 'all':
        return have.length === 0 || hasAll;
      case 'any_strict':
        return have.some((t) => wanted.has(t));
      case 'all_strict':
        return hasAll;
      case 'exact':
        return hasAll && have.every((t) => wanted.has(t));
      default:
        return have.length === 0 || have.some((t) => wanted.has(t));
    }
  };
  return (d) =>
    (!typeCodes || typeCodes.has(ix.type[d]!)) &&
    (document === null || ix.document[d] === document) &&
    (before === null || ix.mentioned[d]! <= before) &&
    (!wanted || tagged(ix.memories[d]!.tags));
}

/** What of `filter` the keyword function takes (`keywordSql` passes these, empty lists as none). */
export function keywordFilterOf(filter: MemoryFilter) {
  return {
    types: filter.types?.length ? filter.types : null,
    tags: filter.tags?.length ? filter.tags : null,
    documentId: filter.documentId ?? null,
    mentionedBefore: filter.mentionedBefore ?? null,
  };
}
