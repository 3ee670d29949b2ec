import { createHash } from 'node:crypto';

/**
 * The name of a bank's own HNSW index for vectors of `dims` (store/sql/bank-index.ts builds it;
 * the search reads whether it exists to choose how its statement is planned).
 */
export const bankIndexName = (projectId: string, bankId: string, dims: number) =>
  `memories_hnsw_bank_${createHash('sha256').update(`${projectId}\u0000${bankId}\u0000${dims}`).digest('hex').slice(0, 24)}`;
