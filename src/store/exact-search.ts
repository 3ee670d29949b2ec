/**
 * Below this many memories a bank is searched exactly: scanning a few thousand vectors costs
 * less than walking an HNSW graph, and the answer is exact. Above it, a bank is searched through
 * an HNSW index: its own, or the one shared by every bank with vectors of its size. The store's
 * SQL decides by it; core reads it to know when a bank may want an index of its own.
 */
export const EXACT_SEARCH_LIMIT = 4000;
