import { MAX_MENTAL_MODELS, REFRESH_MENTAL_MODEL } from '../contract/mental-models.js';
import { operationView, queueOperation } from './operations.js';
import type { Services } from './services.js';

/**
 * Queues the bank's refresh operation unless one is waiting: it refreshes every model asked for
 * (one per slice), so many requests make one operation, and each answer's operation finishes
 * only after the model was refreshed.
 */
export async function queueRefreshes(s: Services, projectId: string, bankId: string) {
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
export async function scheduleAutoRefresh(s: Services, projectId: string, bankId: string): Promise<void> {
  if ((await s.store.requestMentalModelRefresh(projectId, bankId, { stale: true })) > 0)
    await queueRefreshes(s, projectId, bankId);
}

/** Memory ids a kept Reflect answer rests on: its memories, observations and their sources. */
function citedIds(reflectResponse: string): Set<string> {
  const r = JSON.parse(reflectResponse) as {
    based_on?: { memories?: { id: string }[]; observations?: { id: string; source_memory_ids?: string[] }[] };
  };
  const ids = new Set<string>();
  for (const m of r.based_on?.memories ?? []) ids.add(m.id);
  for (const o of r.based_on?.observations ?? []) {
    ids.add(o.id);
    for (const id of o.source_memory_ids ?? []) ids.add(id);
  }
  return ids;
}

/**
 * After a forget: the models whose content rests on a forgotten memory lose that content and
 * their history (which may quote it), and one refresh is queued for them. Reads the bank's
 * models (at most MAX_MENTAL_MODELS) once.
 */
export async function forgetInMentalModels(
  s: Services,
  projectId: string,
  bankId: string,
  memoryIds: string[],
): Promise<number> {
  if (memoryIds.length === 0) return 0;
  const gone = new Set(memoryIds);
  const { items } = await s.store.listMentalModels(projectId, bankId, {
    limit: MAX_MENTAL_MODELS,
    offset: 0,
  });
  const citing = items
    .filter(
      (m) => m.reflect_response !== null && [...citedIds(m.reflect_response)].some((id) => gone.has(id)),
    )
    .map((m) => m.id);
  const n = await s.store.forgetMentalModelContent(projectId, bankId, citing);
  if (n > 0) await queueRefreshes(s, projectId, bankId);
  return n;
}
