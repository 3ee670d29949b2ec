import { randomUUID } from 'node:crypto';
import { requireBank } from './banks.js';
import { AppError, notFound } from './errors.js';
import type { Services } from './services.js';
import type { Operation } from './types.js';
import { isUuid } from './ids.js';

/** What a worker hands to the runner of an operation kind. */
export interface OperationContext {
  id: string;
  projectId: string;
  bankId: string;
  kind: string;
  payload: any;
  /** Aborted when the worker stops or loses its lease. */
  signal: AbortSignal;
}

/** Runs one operation; throwing an AppError with a 4xx status fails it for good, anything else is retried. */
export type OperationRunner = (s: Services, op: OperationContext) => Promise<{ memories_created?: number }>;

/**
 * Queues durable work for a bank. With an explicit `id` (a client's operation_id) a repeated
 * enqueue returns the first operation instead of queueing twice.
 */
export async function enqueueOperation(
  s: Services,
  projectId: string,
  bankId: string,
  kind: string,
  payload: unknown,
  opts: { itemsCount?: number; id?: string } = {},
): Promise<Operation> {
  return (await queueOperation(s, projectId, bankId, kind, payload, opts)).operation;
}

/**
 * `enqueueOperation`, saying whether it queued a new one; with `onceAmong`, an operation of
 * the kind already in one of those states is returned instead (decided in the database).
 */
export async function queueOperation(
  s: Services,
  projectId: string,
  bankId: string,
  kind: string,
  payload: unknown,
  opts: { itemsCount?: number; id?: string; onceAmong?: ('pending' | 'processing')[] } = {},
): Promise<{ operation: Operation; created: boolean }> {
  if (opts.id !== undefined && !isUuid(opts.id)) {
    throw new AppError('validation_error', 'operation_id must be a UUID', {
      details: [{ path: 'operation_id', message: 'must be a UUID' }],
    });
  }
  const queued = await s.store.insertOperation({
    projectId,
    bankId,
    id: opts.id ?? randomUUID(),
    kind,
    payload,
    itemsCount: opts.itemsCount ?? 0,
    ...(opts.onceAmong ? { onceAmong: opts.onceAmong } : {}),
  });
  if (queued.created) s.onEnqueue?.();
  return queued;
}

/** Queues an operation of `kind` for the bank unless one is waiting or running already. */
export async function enqueueOnce(
  s: Services,
  projectId: string,
  bankId: string,
  kind: string,
  payload: unknown,
) {
  await queueOperation(s, projectId, bankId, kind, payload, { onceAmong: ['pending', 'processing'] });
}

export async function getOperation(s: Services, projectId: string, bankId: string, id: string) {
  await requireBank(s, projectId, bankId);
  const op = isUuid(id) ? await s.store.getOperation(projectId, bankId, id) : null;
  if (!op) throw notFound(`operation '${id}'`);
  return op;
}

export async function listOperations(
  s: Services,
  projectId: string,
  bankId: string,
  filter: { status?: string },
  page: { limit: number; cursor?: string },
) {
  await requireBank(s, projectId, bankId);
  return s.store.listOperations(projectId, bankId, filter, page);
}

/** Cancels a pending operation; one already running or finished is a 409. */
export async function cancelOperation(s: Services, projectId: string, bankId: string, id: string) {
  const op = await getOperation(s, projectId, bankId, id);
  const cancelled = await s.store.cancelOperation(projectId, bankId, id);
  if (!cancelled)
    throw new AppError('conflict', `operation '${id}' is ${op.status} and can no longer be cancelled`);
  return cancelled;
}
