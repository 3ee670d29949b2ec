import { bankForWrite } from '../banks.js';
import { awaitBudget } from '../budgets.js';
import { enqueueOperation, type OperationRunner } from '../operations.js';
import { chargeRetain } from '../quotas.js';
import type { Services } from '../services.js';
import { checkRetainRequest, type RetainItem, type RetainRequest, retain } from './retain.js';

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
  items: (Omit<RetainItem, 'timestamp'> & { timestamp?: string })[];
}

/**
 * Async Retain: validates, creates the bank, and queues one durable operation. A client's
 * `operationId` makes a repeated request return the first operation.
 */
export async function retainAsync(
  s: Services,
  projectId: string,
  bankId: string,
  req: RetainRequest,
  opts: { operationId?: string } = {},
): Promise<AsyncRetainResult> {
  checkRetainRequest(req);
  // Quotas are charged when the items are queued, before anything is written (the run is not charged again).
  const refund = await chargeRetain(s, projectId, req.items);
  return queueRetain(s, projectId, bankId, req, opts).catch(async (err: unknown) => {
    await refund();
    throw err;
  });
}

async function queueRetain(
  s: Services,
  projectId: string,
  bankId: string,
  req: RetainRequest,
  opts: { operationId?: string },
): Promise<AsyncRetainResult> {
  await bankForWrite(s, projectId, bankId, { space: req.space });
  const payload: RetainPayload = {
    document_id: req.document_id,
    items: req.items.map((it) => ({ ...it, timestamp: it.timestamp?.toISOString() })),
  };
  const op = await enqueueOperation(s, projectId, bankId, 'retain', payload, {
    itemsCount: req.items.length,
    id: opts.operationId,
  });
  return {
    success: true,
    async: true,
    bank_id: bankId,
    items_count: req.items.length,
    operation_id: op.id,
    operation_ids: [op.id],
    document_id: req.document_id ?? req.items[0]?.document_id ?? null,
  };
}

/**
 * Runs a queued Retain. Memory ids derive from the operation id, so a run repeated after a crash
 * (the first one committed, the process died before marking it done) stores nothing twice.
 */
export const runRetainOperation: OperationRunner = async (s, op) => {
  const p = op.payload as RetainPayload;
  // A project whose model or entity budget is spent: the Retain waits for the window to reset.
  await awaitBudget(s, op.projectId);
  const result = await retain(
    s,
    op.projectId,
    op.bankId,
    {
      document_id: p.document_id,
      items: p.items.map((it) => ({ ...it, timestamp: it.timestamp ? new Date(it.timestamp) : undefined })),
    },
    { idSeed: op.id, signal: op.signal },
  );
  return { memories_created: result.memories_created };
};
