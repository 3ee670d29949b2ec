import { enqueueOnce, type OperationRunner } from '../operations.js';
import type { Deps } from '../services.js';
import type { BankIndexStore, OperationStore } from '../../store/store.js';

// The store searches by it (store/exact-search.ts); Retain reads it from here.
export { EXACT_SEARCH_LIMIT } from '../../store/exact-search.js';

/** The operation kind that builds a bank's own vector index. */
export const BANK_INDEX = 'vector-index';

/**
 * After a Retain: when the bank has grown into one that needs an HNSW index of its own (the store
 * decides: big enough that an exact scan is slow, small enough a share of all vectors that the
 * shared index walks mostly other banks' rows), a worker builds it. Until then the shared index's
 * walks come back short, and recall completes them exactly over the bank's newest memories.
 */
export async function scheduleBankIndex(
  s: Deps<BankIndexStore & OperationStore, 'onEnqueue'>,
  projectId: string,
  bankId: string,
): Promise<void> {
  const dims = await s.store.wantedBankIndex(projectId, bankId);
  if (dims !== null) await enqueueOnce(s, projectId, bankId, BANK_INDEX, { dims });
}

export const runBankIndexOperation: OperationRunner<Deps<BankIndexStore>> = async (s, op) => {
  await s.store.buildBankIndex(op.projectId, op.bankId, Number(op.payload.dims));
  return {};
};
