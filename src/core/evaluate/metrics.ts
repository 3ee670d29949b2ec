/**
 * How an evaluation scores a ranked list against a case's expected memories. With E the
 * expected memories (duplicates counted once) and the first k ids of the list:
 * - rank of a memory: its position (from 1) among the first k, or null;
 * - a case's recall@k: the share of E ranked (|E ∩ first k| / |E|);
 * - a case's reciprocal rank: 1 / the best rank of any memory of E, 0 when none is ranked;
 * - a run's recall@k and MRR: the means of those over its cases, each case weighing the same.
 */

/** Figures are kept to six decimals (as Recall's scores are). */
export const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** Each expected memory's rank (from 1) among the first `k` of `ranked`, or null. */
export function ranksWithin(
  ranked: readonly string[],
  expected: readonly string[],
  k: number,
): (number | null)[] {
  const at = new Map<string, number>();
  for (let i = 0; i < Math.min(k, ranked.length); i++) if (!at.has(ranked[i]!)) at.set(ranked[i]!, i + 1);
  return expected.map((id) => at.get(id) ?? null);
}

export interface CaseScore {
  /** The best rank of an expected memory, or null when none is among the first k. */
  rank: number | null;
  recall: number;
  reciprocal: number;
}

/** One case's figures from its expected memories' ranks. */
export function scoreCase(ranks: readonly (number | null)[]): CaseScore {
  const found = ranks.filter((r): r is number => r !== null);
  const rank = found.length ? Math.min(...found) : null;
  return { rank, recall: ranks.length ? found.length / ranks.length : 0, reciprocal: rank ? 1 / rank : 0 };
}

/** A run's recall@k and MRR: the means over its cases. */
export function meanFigures(scores: readonly CaseScore[]): { recall_at_k: number; mrr: number } {
  if (scores.length === 0) return { recall_at_k: 0, mrr: 0 };
  let recall = 0;
  let reciprocal = 0;
  for (const s of scores) {
    recall += s.recall;
    reciprocal += s.reciprocal;
  }
  return { recall_at_k: round6(recall / scores.length), mrr: round6(reciprocal / scores.length) };
}
