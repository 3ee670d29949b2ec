/**
 * EXPERIMENT (issue 20, not a production feature): the keyword channel computed in this process
 * from a copy of a bank's postings, instead of by `mnemo_keyword_search` in the database. On with
 * `MNEMO_EXPERIMENT_KEYWORD_MEMORY=1`, for Recalls without a filter (types, tags, document, as-of
 * time fall back to SQL). A bank's postings, document frequencies and statistics are read once,
 * on its first search, and never again: a write to the bank afterwards is not seen (no generation
 * check, no deltas, no bound on memory). docs/recall.md ("Throughput, every query new") has what
 * it measured and what a real one would need.
 *
 * The search is migration 54's function step by step (drivers, phase 1 as a pair join, a sum, or
 * each word's highest-impact postings, phase 2 over the other words), with its floating-point
 * operations in the same order. IDF is read from the database with the postings: V8's `Math.log`
 * and PostgreSQL's `ln` (glibc) differ in the last bit for ~6% of arguments.
 */
import type { Queryable } from './db.js';

/** A bank's postings, numbered: memories by id order (so that id order is number order), terms by name. */
export interface KeywordIndex {
  /** The function's `stats`: memory count (at least 1) and average length (at least 1). */
  n: number;
  avgdl: number;
  /** Memory ids (text) by number, ascending. */
  ids: string[];
  /** Term number by term. */
  terms: Map<string, number>;
  /** By term number: document frequency and IDF (PostgreSQL's `ln`, at `n`). */
  df: Int32Array;
  idf: Float64Array;
  /** Postings by term, each term's from `start[t]` to `start[t + 1]` in impact order (tf desc, dl, id). */
  start: Int32Array;
  doc: Int32Array;
  tf: Float32Array;
  /** A posting's length; NaN where the column is NULL. */
  dl: Float32Array;
  /** The same postings by memory: memory `d`'s from `docStart[d]` to `docStart[d + 1]`. */
  docStart: Int32Array;
  docTerm: Int32Array;
  docTf: Float32Array;
  docDl: Float32Array;
  /** A search's working space, a float per memory, NaN between searches (each runs without yielding). */
  scratch: Float64Array;
}

/** Reads bank `bankId`'s postings and statistics in `q` (a snapshot, so that they agree). */
export async function loadKeywordIndex(
  q: Queryable,
  projectId: string,
  bankId: string,
): Promise<KeywordIndex> {
  const [stats] = await q.query<{ n: number; avgdl: number }>(
    `SELECT greatest(b.memory_count, 1)::float8 AS n,
            greatest(b.term_total::float8 / greatest(b.memory_count, 1), 1) AS avgdl
     FROM banks b WHERE b.project_id = $1 AND b.id = $2`,
    [projectId, bankId],
  );
  const n = stats?.n ?? 1;
  const avgdl = stats?.avgdl ?? 1;
  // The IDF as the function computes it (same expression, same types), its text the exact float.
  const termRows = await q.query<{ term: string; df: number; idf: string }>(
    `SELECT bt.term, bt.df, ln(1 + ($3::float8 - bt.df + 0.5) / (bt.df + 0.5))::text AS idf
     FROM bank_terms bt WHERE bt.project_id = $1 AND bt.bank_id = $2 AND bt.df > 0`,
    [projectId, bankId, n],
  );
  const postings = await q.query<{ term: string; id: string; tf: number; dl: number | null }>(
    `SELECT t.term, t.memory_id::text AS id, t.tf, t.dl FROM memory_terms t
     WHERE t.project_id = $1 AND t.bank_id = $2`,
    [projectId, bankId],
  );
  const terms = new Map<string, number>();
  const df = new Int32Array(termRows.length);
  const idf = new Float64Array(termRows.length);
  for (const r of termRows) {
    df[terms.size] = r.df;
    idf[terms.size] = Number(r.idf);
    terms.set(r.term, terms.size);
  }
  // uuid order is byte order, which the canonical lower-case text keeps.
  const ids = [...new Set(postings.map((p) => p.id))].sort();
  const docOf = new Map(ids.map((id, i) => [id, i]));
  const rows = postings
    .filter((p) => terms.has(p.term))
    .map((p) => ({ t: terms.get(p.term)!, d: docOf.get(p.id)!, tf: p.tf, dl: p.dl ?? Number.NaN }));
  const fill = (order: typeof rows, key: (r: (typeof rows)[number]) => number, count: number) => {
    const start = new Int32Array(count + 1);
    for (const r of order) start[key(r) + 1]!++;
    for (let i = 0; i < count; i++) start[i + 1]! += start[i]!;
    return start;
  };
  // Impact order: tf descending, dl ascending with NULL last (the function's ORDER BY), then id.
  const byImpact = [...rows].sort(
    (a, b) =>
      a.t - b.t ||
      b.tf - a.tf ||
      (Number.isNaN(a.dl) ? 1 : 0) - (Number.isNaN(b.dl) ? 1 : 0) ||
      (Number.isNaN(a.dl) ? 0 : a.dl - b.dl) ||
      a.d - b.d,
  );
  const byDoc = [...rows].sort((a, b) => a.d - b.d || a.t - b.t);
  return {
    n,
    avgdl,
    ids,
    terms,
    df,
    idf,
    start: fill(byImpact, (r) => r.t, terms.size),
    doc: Int32Array.from(byImpact, (r) => r.d),
    tf: Float32Array.from(byImpact, (r) => r.tf),
    dl: Float32Array.from(byImpact, (r) => r.dl),
    docStart: fill(byDoc, (r) => r.d, ids.length),
    docTerm: Int32Array.from(byDoc, (r) => r.t),
    docTf: Float32Array.from(byDoc, (r) => r.tf),
    docDl: Float32Array.from(byDoc, (r) => r.dl),
    scratch: new Float64Array(ids.length).fill(Number.NaN),
  };
}

/** Indexes of the process's store, by bank; loaded once each (see the module's comment). */
export interface KeywordMemory {
  index(q: Queryable, projectId: string, bankId: string): Promise<KeywordIndex>;
}

export function keywordMemory(): KeywordMemory {
  const banks = new Map<string, Promise<KeywordIndex>>();
  return {
    index(q, projectId, bankId) {
      const key = `${projectId}\u0000${bankId}`;
      let loading = banks.get(key);
      if (!loading) {
        loading = loadKeywordIndex(q, projectId, bankId);
        banks.set(key, loading);
        loading.catch(() => banks.delete(key));
      }
      return loading;
    },
  };
}

/**
 * The experiment's switch, read here rather than in config/ so that the prototype touches no
 * composition root: a real one would be an option of `openStore`.
 */
export function keywordMemoryFromEnv(): KeywordMemory | null {
  return process.env.MNEMO_EXPERIMENT_KEYWORD_MEMORY === '1' ? keywordMemory() : null;
}
