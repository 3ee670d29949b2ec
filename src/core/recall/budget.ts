import { memoByText } from '../../text/memo.js';
import { countTokens } from '../../text/tokens.js';

/** Recall returns the same memories again and again: each text is counted once. */
const tokensOf = memoByText(countTokens);

/**
 * What each `budget` level does. `pool`: candidates each channel returns; `rerank`: fused
 * candidates the reranker scores (each one read from the store); `results`: the most returned
 * before the token cut; `graphDepth`: hops from the query's entities (-1: no graph channel).
 * Measured costs are in docs/recall.md.
 */
export const BUDGETS = {
  low: { pool: 40, rerank: 40, results: 20, channels: ['semantic', 'keyword'], graphDepth: -1 },
  mid: {
    pool: 100,
    rerank: 100,
    results: 50,
    channels: ['semantic', 'keyword', 'graph', 'temporal'],
    graphDepth: 1,
  },
  high: {
    pool: 250,
    rerank: 250,
    results: 100,
    channels: ['semantic', 'keyword', 'graph', 'temporal'],
    graphDepth: 2,
  },
} as const;

export type Budget = keyof typeof BUDGETS;

/** Candidates read and reranked per recall unit, query characters and `max_tokens` per unit. */
const UNIT = { candidates: 50, queryChars: 1000, maxTokens: 10_000 } as const;

/**
 * What one Recall costs against the project's `recall_units_*` budgets, known before any work:
 * per bank searched, one unit per 50 candidates its budget level reads and reranks (low 1,
 * mid 2, high 5), plus one unit per whole 1,000 characters of query (the query is tagged and
 * embedded) and per whole 10,000 `max_tokens` (the answer's size). A default Recall of one bank
 * costs 2; the dearest the contract allows (high, with the org bank, a 20,000-character query,
 * 100,000 tokens) costs 40.
 */
export function recallUnits(query: string, level: Budget, banks: number, maxTokens: number): number {
  return (
    banks * Math.ceil(BUDGETS[level].rerank / UNIT.candidates) +
    Math.floor(query.length / UNIT.queryChars) +
    Math.floor(maxTokens / UNIT.maxTokens)
  );
}

/**
 * Keeps results in order until the next one would overflow `maxTokens` (counted with the
 * o200k_base tokenizer over each result's text).
 */
export function cutToBudget<T extends { text: string }>(
  items: T[],
  maxTokens: number,
): { items: T[]; tokensUsed: number; truncated: boolean } {
  let used = 0;
  const kept: T[] = [];
  for (const item of items) {
    const n = tokensOf(item.text);
    if (used + n > maxTokens) return { items: kept, tokensUsed: used, truncated: true };
    used += n;
    kept.push(item);
  }
  return { items: kept, tokensUsed: used, truncated: false };
}
