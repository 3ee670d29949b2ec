/**
 * Below this many memories a bank is searched exactly: scanning a few thousand vectors costs
 * less than walking an HNSW graph, and the answer is exact. Above it, a bank is searched through
 * an HNSW index: its own, or the one shared by every bank with vectors of its size. The store's
 * SQL decides by it; core reads it to know when a bank may want an index of its own.
 */
export const EXACT_SEARCH_LIMIT = 4000;

/**
 * Rows, at most, the exact search reads when the HNSW walk comes back short (a filter passing
 * fewer memories than asked for): the bank's newest, through an index. Never the whole bank.
 */
export const EXACT_FALLBACK_ROWS = 10_000;
