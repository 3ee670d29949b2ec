import { findOperation, operationView } from './operations.js';
import { chargeRetain } from './quotas.js';
import { itemsUndone, retainUndone } from './retain/retain-async.js';
import type { Deps } from './services.js';
import { AppError } from './errors.js';
import { IMPORT_DOCUMENTS } from './transfer/import.js';
import type { BankStore, ChargeBack, LimitStore, OperationStore } from '../store/store.js';
import type { CANCELLABLE_WHILE_RUNNING } from '../contract/operations.js';

type UndoneOf = (payload: unknown, progress: unknown) => ChargeBack;

/**
 * The kinds charged their items when queued (a Retain, an import), and what one that fails gives
 * back of its charge: what it did not store, from its payload and the progress its last finished
 * slice recorded.
 */
export const OPERATION_UNDONE: Readonly<Record<string, UndoneOf>> = {
  retain: retainUndone,
  [IMPORT_DOCUMENTS]: retainUndone,
} satisfies Record<(typeof CANCELLABLE_WHILE_RUNNING)[number], UndoneOf>;

/** A kind's `OPERATION_UNDONE` for any kind (null: it gives nothing back), as the store asks it. */
export const undoneOfKind = (kind: string, payload: unknown, progress: unknown): ChargeBack | null =>
  OPERATION_UNDONE[kind]?.(payload, progress) ?? null;

/**
 * Cancels an operation: a pending one of any kind, and one of a kind charged when queued (a
 * Retain, an upload, an import) while it runs too, between its slices or in one (that slice then
 * stores nothing). What it did not store of what it was charged is given back as it is marked
 * cancelled, from the progress its stored slices recorded with their writes: once, whether the
 * worker fails or finishes it at the same moment or another cancel races it. One finished, or
 * of another kind and running, is a 409.
 */
export async function cancelOperation(
  s: Deps<BankStore & OperationStore>,
  projectId: string,
  bankId: string,
  id: string,
) {
  const op = await findOperation(s, projectId, bankId, id);
  const of = OPERATION_UNDONE[op.kind];
  // Read before the cancel's transaction (a payload never changes; an encrypted one is opened
  // here): the transaction takes from it only what the operation had not done.
  const payload = of && (await s.store.operationPayload(projectId, bankId, id))?.payload;
  const cancelled = await s.store.cancelOperation(
    projectId,
    bankId,
    id,
    of ? { running: true, undone: (progress) => of(payload, progress) } : {},
  );
  if (!cancelled) {
    const now = (await s.store.getOperation(projectId, bankId, id))?.status ?? op.status;
    throw new AppError('conflict', `operation '${id}' is ${now} and can no longer be cancelled`);
  }
  return { ...operationView(cancelled), success: true as const, message: `operation '${id}' cancelled` };
}

/**
 * Queues a failed operation again (from the progress it recorded); any other state is a 409. A
 * kind charged when queued gave back, as it failed, what it had not stored: its retry is charged
 * that again before it is queued (over a quota or budget, a 429 and it stays failed), or failing
 * on purpose would buy the work for free. The operation holds the new charge, as it did the first.
 */
export async function retryOperation(
  s: Deps<BankStore & OperationStore & LimitStore, 'onEnqueue' | 'limitDefaults' | 'now'>,
  projectId: string,
  bankId: string,
  id: string,
) {
  const op = await findOperation(s, projectId, bankId, id);
  const items =
    op.status === 'failed' && OPERATION_UNDONE[op.kind]
      ? itemsUndone(
          (await s.store.operationPayload(projectId, bankId, id))?.payload,
          await s.store.operationProgress(projectId, bankId, id),
        )
      : [];
  const charged = items.length ? await chargeRetain(s, projectId, items) : null;
  let queued: Awaited<ReturnType<typeof s.store.requeueOperation>>;
  try {
    queued = await s.store.requeueOperation(projectId, bankId, id, charged?.handOver(items, true));
  } catch (err) {
    await charged?.();
    throw err;
  }
  if (!queued) {
    await charged?.();
    const now = op.status === 'failed' ? 'queued again by another retry' : op.status;
    throw new AppError('conflict', `operation '${id}' is ${now}: only a failed operation can be retried`);
  }
  charged?.handOver(items);
  s.onEnqueue?.();
  return { ...operationView(queued), success: true as const, message: `operation '${id}' queued for retry` };
}
