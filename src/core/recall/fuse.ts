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
    const { ids, weight } = list;
    for (let i = 0; i < ids.length; i++)
      scores.set(ids[i]!, (scores.get(ids[i]!) ?? 0) + weight / (k + i + 1));
  }
  const best = lists.reduce((sum, l) => sum + (l.ids.length ? l.weight : 0), 0) / (k + 1);
  // One object per id, no [id, score] pair first (a Recall fuses up to 400 ids).
  const fused: { id: string; score: number }[] = [];
  scores.forEach((score, id) => {
    fused.push({ id, score: best > 0 ? score / best : 0 });
  });
  return fused.sort((a, b) => b.score - a.score);
}
