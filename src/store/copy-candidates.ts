/**
 * A Recall's candidates from a bank's copy in the process (`KeywordIndex.memories`): the rows and
 * similarities `getCandidates` reads, at the copy's version, without a statement. On the 10k
 * bench bank the candidates statement was about a third of a Recall's database CPU on PostgreSQL
 * and more on the embedded engine (docs/recall.md, "Candidates from the bank's copy").
 */
import type { KeywordIndex } from './keyword-index.js';
import type { Memory } from './records.js';

/**
 * Each of `ids` (valid memories of the bank at the copy's version) with its cosine similarity to
 * `vector`, or null when one is not a valid memory of the copy (the caller reads them in SQL).
 */
export function candidatesFromCopy(
  copy: KeywordIndex,
  ids: readonly string[],
  vector: Float32Array,
): (Memory & { similarity: number | null })[] | null {
  const out: (Memory & { similarity: number | null })[] = new Array(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const d = numberOf(copy.ids, ids[i]!);
    const m = d < 0 ? undefined : copy.memories[d];
    if (m?.state !== 'valid') return null;
    out[i] = {
      ...(m as Memory),
      similarity: similarity(copy.vectors, copy.vectorStart[d]!, copy.vectorStart[d + 1]!, vector),
    };
  }
  return out;
}

/** `id`'s number in `ids` (ascending: uuid order is the canonical text's order), -1 if absent. */
function numberOf(ids: readonly string[], id: string): number {
  let lo = 0;
  let hi = ids.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = ids[mid]!;
    if (at === id) return mid;
    if (at < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/**
 * As the candidates statement computes it: `1 - (embedding <=> query)` for the vector in
 * `data[from..to)` when it is of the query's size (pgvector: the cosine clamped to [-1, 1], NaN
 * for a zero vector), else null. pgvector sums in single precision, this in double: the two
 * differ in the last bits.
 */
function similarity(data: Float32Array, from: number, to: number, q: Float32Array): number | null {
  if (to - from !== q.length || to === from) return null;
  let dot = 0;
  let nv = 0;
  let nq = 0;
  for (let i = 0; i < q.length; i++) {
    const x = data[from + i]!;
    dot += x * q[i]!;
    nv += x * x;
    nq += q[i]! * q[i]!;
  }
  const cos = Math.min(1, Math.max(-1, dot / Math.sqrt(nv * nq)));
  return 1 - (1 - cos);
}
