import { walkFare } from './budgets.js';
import { randomUUID } from 'node:crypto';
import { requireBank } from './banks.js';
import { AppError, notFound } from './errors.js';
import type { Deps, Services } from './services.js';
import type { BankStore, LimitStore, OperationCharge, OperationStore } from '../store/store.js';
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
  /** Where the previous slice of this operation stopped (what it returned as `more`); null on the first. */
  progress: unknown;
  /**
   * The worker holding the operation's lease (absent when it is run outside the queue): a slice
   * that records its progress with its own write does so only while this worker holds it.
   */
  workerId?: string;
}

/**
 * What one run (one slice) of an operation did. With `more` the operation is not finished: the
 * worker records `more` as its progress and gives it back to the queue, so other tenants' work
 * runs before its next slice, which gets `more` back as `progress`.
 */
export interface SliceResult {
  /** Memories created by this slice; the operation's count is the sum over its slices. */
  memories_created?: number;
  more?: unknown;
  /**
   * The operation cannot go on (a quota): it ends `failed` with this as its error, and what its
   * slices did stays done and counted. Never with `more`.
   */
  stopped?: string;
  /** What the finished operation hands back beside its counts (`result_metadata`). Never with `more`. */
  result_metadata?: Record<string, unknown>;
  /**
   * The slice recorded its progress (`more`, or its end) and `memories_created` on the operation
   * in its write's own transaction: the worker only gives the operation back (or finishes it).
   */
  recorded?: boolean;
}

/**
 * Runs one slice of an operation: a bounded amount of work (SLICE_MS, or a fixed number of
 * items), so one tenant's big job cannot hold the worker. Throwing an AppError with a 4xx status
 * fails it for good, anything else is retried from the last recorded progress. A runner names
 * what it uses (`OperationRunner<Deps<…>>`); the worker's table of runners holds them as
 * `OperationRunner` (of the whole `Services`), which every narrower runner is.
 */
export type OperationRunner<D = Services> = (s: D, op: OperationContext) => Promise<SliceResult>;

/**
 * Thrown by a runner that must not run yet (another operation of its bank has to finish
 * first): the worker puts it back to pending for `delayMs`, without using up an attempt.
 */
export class OperationWait extends Error {
  constructor(
    message: string,
    readonly delayMs: number,
  ) {
    super(message);
    this.name = 'OperationWait';
  }
}

/** About how long one slice of background work runs before it gives the worker back. */
export const SLICE_MS = 250;

/** A deadline for one slice: `over()` once SLICE_MS have passed since it was made. */
export function sliceDeadline(ms = SLICE_MS): { over(): boolean } {
  const end = performance.now() + ms;
  return { over: () => performance.now() >= end };
}

/**
 * Runs every slice of an operation here and now, one after another (tests, and callers that
 * want the work done without the queue); the memories created are summed over the slices.
 */
export async function runAllSlices<D>(
  s: D,
  runner: OperationRunner<D>,
  op: Omit<OperationContext, 'progress'>,
): Promise<{ memories_created: number; stopped?: string }> {
  let progress: unknown = null;
  let created = 0;
  for (;;) {
    const r = await runner(s, { ...op, progress });
    created += r.memories_created ?? 0;
    if (r.stopped !== undefined) return { memories_created: created, stopped: r.stopped };
    if (r.more === undefined) return { memories_created: created };
    progress = r.more;
  }
}

/**
 * Queues durable work for a bank. With an explicit `id` (a client's operation_id) a repeated
 * enqueue returns the first operation instead of queueing twice.
 */
export async function enqueueOperation(
  s: Deps<OperationStore, 'onEnqueue'>,
  projectId: string,
  bankId: string,
  kind: string,
  payload: unknown,
  opts: { itemsCount?: number; id?: string; charge?: OperationCharge } = {},
): Promise<Operation> {
  return (await queueOperation(s, projectId, bankId, kind, payload, opts)).operation;
}

/**
 * `enqueueOperation`, saying whether it queued a new one; with `onceAmong`, an operation of
 * the kind already in one of those states is returned instead (decided in the database).
 */
export async function queueOperation(
  s: Deps<OperationStore, 'onEnqueue'>,
  projectId: string,
  bankId: string,
  kind: string,
  payload: unknown,
  opts: {
    itemsCount?: number;
    id?: string;
    onceAmong?: ('pending' | 'processing')[];
    /** What it was charged as it was queued (see `OperationStore.insertOperation`). */
    charge?: OperationCharge;
  } = {},
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
    ...(opts.charge ? { charge: opts.charge } : {}),
  });
  if (queued.created) s.onEnqueue?.();
  return queued;
}

/** Queues an operation of `kind` for the bank unless one is waiting or running already. */
export async function enqueueOnce(
  s: Deps<OperationStore, 'onEnqueue'>,
  projectId: string,
  bankId: string,
  kind: string,
  payload: unknown,
) {
  await queueOperation(s, projectId, bankId, kind, payload, { onceAmong: ['pending', 'processing'] });
}

/** An operation with Hindsight's names for its fields beside mnemo's. */
export function operationView(op: Operation) {
  return {
    ...op,
    operation_id: op.id,
    task_type: op.kind,
    operation_type: op.kind,
    error_message: op.error,
    retry_count: Math.max(op.attempts - 1, 0),
  };
}

export async function findOperation(
  s: Deps<BankStore & OperationStore>,
  projectId: string,
  bankId: string,
  id: string,
) {
  await requireBank(s, projectId, bankId);
  const op = isUuid(id) ? await s.store.getOperation(projectId, bankId, id) : null;
  if (!op) throw notFound(`operation '${id}'`);
  return op;
}

export async function getOperation(
  s: Deps<BankStore & OperationStore>,
  projectId: string,
  bankId: string,
  id: string,
) {
  return operationView(await findOperation(s, projectId, bankId, id));
}

/** A page of the bank's operations, newest first, with the count of all that match. */
export async function listOperations(
  s: Deps<BankStore & LimitStore & OperationStore, 'limitDefaults' | 'now'>,
  projectId: string,
  bankId: string,
  filter: { status?: string; kind?: string },
  page: { limit: number; cursor?: string; offset?: number },
) {
  await requireBank(s, projectId, bankId);
  const offset = page.cursor === undefined ? (page.offset ?? 0) : 0;
  const pay = walkFare(s, projectId);
  const found = await s.store.listOperations(projectId, bankId, filter, { ...page, offset, pay });
  const total = await s.store.countListedOperations(projectId, bankId, filter, pay);
  const items = found.items.map(operationView);
  return {
    items,
    next_cursor: found.next_cursor,
    bank_id: bankId,
    operations: items,
    total,
    limit: page.limit,
    offset,
  };
}

/** Deletes the record of a finished operation; a pending or running one is a 409 (cancel it first). */
export async function deleteOperation(
  s: Deps<BankStore & OperationStore>,
  projectId: string,
  bankId: string,
  id: string,
) {
  const op = await findOperation(s, projectId, bankId, id);
  if (!(await s.store.deleteFinishedOperation(projectId, bankId, id)))
    throw new AppError(
      'conflict',
      `operation '${id}' is ${op.status}: only a completed, failed or cancelled operation can be deleted`,
    );
  return { ...operationView(op), success: true as const, message: `operation '${id}' deleted` };
}
