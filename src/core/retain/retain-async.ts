import { bankForWrite } from '../banks.js';
import { awaitBudget, retainCost } from '../budgets.js';
import { type OperationRunner, OperationWait, queueOperation } from '../operations.js';
import { chargeRetain, type RetainRefund } from '../quotas.js';
import type { Deps } from '../services.js';
import type { BankStore, ChargeBack, LimitStore, OperationStore } from '../../store/store.js';
import {
  checkRetainRequest,
  type RetainItem,
  type RetainRequest,
  type RetainStore,
  retain,
  unchangedDocuments,
} from './retain.js';
import { sliceEnd } from './slices.js';
import { retainCompleted } from '../webhooks/events.js';

export { sliceEnd } from './slices.js';

export interface AsyncRetainResult {
  success: true;
  async: true;
  bank_id: string;
  items_count: number;
  operation_id: string;
  operation_ids: string[];
  document_id: string | null;
}

/** The JSON form of a retain request kept in the operation's payload. */
interface RetainPayload {
  document_id?: string;
  /** A document's reprocessing: extracted again even where unchanged. */
  reprocess?: true;
  items: (Omit<RetainItem, 'timestamp'> & { timestamp?: string })[];
}

/**
 * Async Retain: validates, creates the bank, and queues one durable operation. A client's
 * `operationId` makes a repeated request return the first operation (and cost nothing).
 */
export async function retainAsync(
  s: Deps<BankStore & LimitStore & OperationStore, 'limitDefaults' | 'now' | 'onEnqueue'>,
  projectId: string,
  bankId: string,
  req: RetainRequest,
  opts: { operationId?: string } = {},
): Promise<AsyncRetainResult> {
  checkRetainRequest(req);
  // Quotas are charged when the items are queued, before anything is written (the run is not charged again).
  const refund = await chargeRetain(s, projectId, req.items);
  const queued = await queueRetain(s, projectId, bankId, req, opts, refund).catch(async (err: unknown) => {
    await refund();
    throw err;
  });
  // Nothing new queued (the operation of an earlier request with the same id): nothing charged.
  if (!queued.created) await refund();
  return queued.result;
}

/**
 * Creates the bank and queues the Retain of a request already checked and charged; `created`
 * is false when `operationId` names an operation queued before (returned instead). The charge
 * of its items is handed over to the operation it queues (`charged`), which gives back what it
 * does not store should it fail.
 */
export async function queueRetain(
  s: Deps<BankStore & OperationStore, 'onEnqueue'>,
  projectId: string,
  bankId: string,
  req: RetainRequest,
  opts: { operationId?: string },
  charged: RetainRefund,
): Promise<{ result: AsyncRetainResult; created: boolean }> {
  await bankForWrite(s, projectId, bankId, { space: req.space });
  const payload: RetainPayload = {
    document_id: req.document_id,
    ...(req.reprocess ? { reprocess: true as const } : {}),
    items: req.items.map((it) => ({ ...it, timestamp: it.timestamp?.toISOString() })),
  };
  const { operation: op, created } = await queueOperation(s, projectId, bankId, 'retain', payload, {
    itemsCount: req.items.length,
    id: opts.operationId,
    charge: charged.handOver(req.items, true),
  });
  // Queued: the operation holds its items' charge from now on (a repeated id queued nothing).
  if (created) charged.handOver(req.items);
  const result: AsyncRetainResult = {
    success: true,
    async: true,
    bank_id: bankId,
    items_count: req.items.length,
    operation_id: op.id,
    operation_ids: [op.id],
    document_id: req.document_id ?? req.items[0]?.document_id ?? null,
  };
  return { result, created };
}

/** How long a queued Retain behind another of its bank waits before it looks again. */
const RETAIN_TURN_WAIT_MS = 500;

/** Where a queued Retain got to: the next item, memories made so far, unchanged documents. */
interface RetainProgress {
  next: number;
  memories: number;
  unchanged: string[];
}

/**
 * Runs a queued Retain a slice at a time (see `sliceEnd`), each slice in its own transaction,
 * so a big batch does not hold the worker, the bank or the embedded engine for its whole length.
 * Run by a worker, a slice records its progress in its own transaction; memory ids derive from
 * the operation id, so a slice repeated anyway (run outside the queue, or recorded by an older
 * version after its write) stores nothing twice.
 */
export const runRetainOperation: OperationRunner<
  Deps<RetainStore, 'embedder' | 'limitDefaults' | 'llm' | 'now' | 'onEnqueue'>
> = async (s, op) => {
  const p = op.payload as RetainPayload;
  const started = op.progress as RetainProgress | null;
  // A project whose model or entity budget is spent: the Retain waits for the window to reset
  // (asked first: a Retain behind one waiting for the budget waits as long, not in short turns).
  await awaitBudget(s, op.projectId);
  // The bank's queued Retains run one after another, in the order they were queued: two at once
  // (on two workers or processes) would interleave their slices, and two of one document would
  // each replace it with their first slice and then add their later ones to the other's.
  if (!started && (await s.store.earlierOperationUnfinished(op.projectId, op.bankId, op.id, op.kind)))
    throw new OperationWait('waiting for an earlier Retain of the bank to finish', RETAIN_TURN_WAIT_MS);
  const req = {
    document_id: p.document_id,
    reprocess: p.reprocess,
    items: p.items.map((it) => ({ ...it, timestamp: it.timestamp ? new Date(it.timestamp) : undefined })),
  };
  // Checked when queued; once more on the first slice (an operation queued by an older version,
  // or imported), not on every slice: the whole request is walked each time.
  if (!started) checkRetainRequest(req);
  const at = started ?? {
    next: 0,
    memories: 0,
    unchanged: await unchangedDocuments(s, op.projectId, op.bankId, req),
  };
  const end = sliceEnd(p.items, at.next);
  const after = (made: number): RetainProgress => ({
    next: end,
    memories: at.memories + made,
    unchanged: at.unchanged,
  });
  const result = await retain(s, op.projectId, op.bankId, req, {
    idSeed: op.id,
    signal: op.signal,
    slice: { start: at.next, end, firstMemory: at.memories, unchanged: at.unchanged },
    // Under a worker's lease the slice's write records its progress (its end: the last one too)
    // in its own transaction: what is stored and what the progress says can never disagree.
    ...(op.workerId ? { lease: { workerId: op.workerId, progress: after } } : {}),
  });
  const more = end < p.items.length ? after(result.memory_ids.length) : undefined;
  if (!more) await retainCompleted(s, op.projectId, op.bankId, op.id, req);
  return {
    memories_created: result.memories_created,
    ...(more ? { more } : {}),
    ...(op.workerId ? { recorded: true } : {}),
  };
};

/** The items of a queued Retain (or import) from where its progress stood: what it has not stored. */
export function itemsUndone(payload: unknown, progress: unknown): RetainPayload['items'] {
  const items = (payload as Partial<RetainPayload> | null)?.items ?? [];
  return items.slice((progress as RetainProgress | null)?.next ?? 0);
}

/**
 * What a queued Retain (or import) that failed or was cancelled did not store, as what its charge
 * gives back: the items from where its progress stands (recorded by each stored slice in the
 * transaction of its write, so a slice stored but not recorded cannot exist), their characters
 * and given entities.
 */
export function retainUndone(payload: unknown, progress: unknown): ChargeBack {
  const left = itemsUndone(payload, progress);
  const units: Record<string, number> = {};
  for (const [unit, n] of Object.entries(retainCost(left))) if (n !== undefined) units[unit] = n;
  return { items: left.length, units };
}
