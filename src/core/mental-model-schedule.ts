import { REFRESH_MENTAL_MODEL } from '../contract/mental-models.js';
import { operationView, queueOperation } from './operations.js';
import type { Deps } from './services.js';
import type { MentalModelStore, OperationStore } from '../store/store.js';

/**
 * Queues the bank's refresh operation unless one is waiting: it refreshes every model asked for
 * (one per slice), so many requests make one operation, and each answer's operation finishes
 * only after the model was refreshed.
 */
export async function queueRefreshes(
  s: Deps<OperationStore, 'onEnqueue'>,
  projectId: string,
  bankId: string,
) {
  const q = await queueOperation(s, projectId, bankId, REFRESH_MENTAL_MODEL, {}, { onceAmong: ['pending'] });
  return {
    operation_id: q.operation.id,
    status: q.operation.status,
    deduplicated: !q.created,
    operation: operationView(q.operation),
  };
}

/**
 * After a consolidation: the models set to refresh after one (`refresh_after_consolidation`)
 * that the bank has moved past are marked, and one operation queued for them all.
 */
export async function scheduleAutoRefresh(
  s: Deps<MentalModelStore & OperationStore, 'onEnqueue'>,
  projectId: string,
  bankId: string,
): Promise<void> {
  if ((await s.store.requestMentalModelRefresh(projectId, bankId, { stale: true })) > 0)
    await queueRefreshes(s, projectId, bankId);
}
