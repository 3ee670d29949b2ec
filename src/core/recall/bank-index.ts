import { enqueueOnce, type OperationRunner } from '../operations.js';
import type { Services } from '../services.js';

/**
 * Below this many memories a bank is searched exactly: scanning a few thousand vectors costs
 * less than walking an HNSW graph, and the answer is exact. Above it, a bank is searched through
 * an HNSW index: its own, or the one shared by every bank with vectors of its size.
 */
export const EXACT_SEARCH_LIMIT = 4000;

/** The operation kind that builds a bank's own vector index. */
export const BANK_INDEX = 'vector-index';

/**
 * After a Retain: when the bank has grown into one that needs an HNSW index of its own (the store
 * decides: big enough that an exact scan is slow, small enough a share of all vectors that the
 * shared index walks mostly other banks' rows), a worker builds it. Until then recall is exact.
 */
export async function scheduleBankIndex(s: Services, projectId: string, bankId: string): Promise<void> {
  const dims = await s.store.wantedBankIndex(projectId, bankId);
  if (dims !== null) await enqueueOnce(s, projectId, bankId, BANK_INDEX, { dims });
}

export const runBankIndexOperation: OperationRunner = async (s, op) => {
  await s.store.buildBankIndex(op.projectId, op.bankId, Number(op.payload.dims));
  return {};
};
