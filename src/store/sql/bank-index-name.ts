import { createHash } from 'node:crypto';

/** Names computed already (a Recall asks for its bank's on every search); emptied when full. */
const names = new Map<string, string>();
const MAX_NAMES = 10_000;

/**
 * The name of a bank's own HNSW index for vectors of `dims` (store/sql/bank-index.ts builds it;
 * the search reads whether it exists to choose how its statement is planned).
 */
export const bankIndexName = (projectId: string, bankId: string, dims: number) => {
  const key = `${projectId}\u0000${bankId}\u0000${dims}`;
  let name = names.get(key);
  if (name === undefined) {
    name = `memories_hnsw_bank_${createHash('sha256').update(key).digest('hex').slice(0, 24)}`;
    if (names.size >= MAX_NAMES) names.clear();
    names.set(key, name);
  }
  return name;
};
