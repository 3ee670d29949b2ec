/** Reciprocal rank fusion constant (the usual 60: flattens the head, rewards agreement). */
export const RRF_K = 60;

export interface RankedList {
  channel: string;
  weight: number;
  ids: string[];
}

/**
 * Weighted reciprocal rank fusion: score(d) = Σ weight_c / (k + rank_c(d)), ranks from 1.
 * Ties keep the order of first appearance, so the result is deterministic.
 * Returned scores are normalised by the best achievable score (every channel ranks d first),
 * so they fall in [0, 1].
 */
export function fuse(lists: RankedList[], k = RRF_K): { id: string; score: number }[] {
  const scores = new Map<string, number>();
  for (const list of lists) {
    list.ids.forEach((id, i) => {
      scores.set(id, (scores.get(id) ?? 0) + list.weight / (k + i + 1));
    });
  }
  const best = lists.reduce((sum, l) => sum + (l.ids.length ? l.weight : 0), 0) / (k + 1);
  return [...scores]
    .map(([id, score]) => ({ id, score: best > 0 ? score / best : 0 }))
    .sort((a, b) => b.score - a.score);
}
