import { effectiveConfig } from '../bank-config.js';
import { requireBank } from '../banks.js';
import { awaitBudget, withMeteredModel } from '../budgets.js';
import { LlmLedger } from '../llm-ledger.js';
import { type OperationRunner, queueOperation, sliceDeadline } from '../operations.js';
import type { Services } from '../services.js';
import type { Operation } from '../types.js';
import { consolidateBank } from './consolidate.js';

/** The operation kind of a consolidation run. */
export const CONSOLIDATE = 'consolidate';

/**
 * Queues a consolidation run for the bank, or returns the one already waiting: a run takes
 * every memory retained before it starts, so one pending run per bank is enough.
 */
async function queue(
  s: Services,
  projectId: string,
  bankId: string,
): Promise<{ operation: Operation; deduplicated: boolean }> {
  // Checked and queued in one step in the database: concurrent Retains queue one run.
  const q = await queueOperation(s, projectId, bankId, CONSOLIDATE, {}, { onceAmong: ['pending'] });
  return { operation: q.operation, deduplicated: !q.created };
}

/** After a Retain: queues a run unless the bank turned automatic observations off (`enable_observations`). */
export async function scheduleConsolidation(s: Services, projectId: string, bankId: string): Promise<void> {
  const bank = await s.store.getBank(projectId, bankId);
  if (bank && effectiveConfig(bank.config).enable_observations) await queue(s, projectId, bankId);
}

/** `POST /banks/{bank}/consolidate`: the bank must exist; runs whatever `enable_observations` says. */
export async function requestConsolidation(s: Services, projectId: string, bankId: string) {
  await requireBank(s, projectId, bankId);
  const { operation, deduplicated } = await queue(s, projectId, bankId);
  return { operation_id: operation.id, deduplicated, operation };
}

/**
 * Runs a queued consolidation a slice at a time (about SLICE_MS of work; the cursor is its
 * progress); `memories_created` counts the new observations.
 */
export const runConsolidateOperation: OperationRunner = async (s, op) => {
  // Each slice commits with its cursor: a run stopped by a spent model budget resumes where it was.
  await awaitBudget(s, op.projectId);
  // The slice's model calls are recorded for the bank (llm-requests), written when it ends.
  const ledger = new LlmLedger(s, op.projectId, op.bankId, 'consolidation');
  const metered = withMeteredModel(ledger.services(s, 'plan'), op.projectId, 'resumable');
  // First the sweep of orphaned observations, a page per slice (`prune`: where it goes on;
  // null once done), then the memories from the consolidation cursor.
  const progress = (op.progress ?? { prune: '' }) as { prune: string | null };
  let prune = progress.prune;
  if (prune !== null) {
    prune = (await s.store.pruneObservations(op.projectId, op.bankId, { after: prune, limit: PRUNE_PAGE }))
      .next;
    if (prune !== null) return { more: { prune } };
  }
  await s.store.maintainStatistics();
  let result: Awaited<ReturnType<typeof consolidateBank>>;
  try {
    result = await consolidateBank(metered, op.projectId, op.bankId, {
      signal: op.signal,
      deadline: sliceDeadline(),
      prune: false,
    });
  } finally {
    await ledger.settle();
  }
  return { memories_created: result.observations_created, ...(result.more ? { more: { prune: null } } : {}) };
};

/** Observations a consolidation slice checks for orphans. */
const PRUNE_PAGE = 500;
