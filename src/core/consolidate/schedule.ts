import { effectiveConfig } from '../bank-config.js';
import { requireBank } from '../banks.js';
import { awaitBudget, withMeteredModel } from '../budgets.js';
import { LlmLedger } from '../llm-ledger.js';
import { scheduleAutoRefresh } from '../mental-model-schedule.js';
import { type OperationRunner, queueOperation, sliceDeadline } from '../operations.js';
import type { Deps } from '../services.js';
import type {
  BankStore,
  OperationStore,
  LimitStore,
  LlmRequestStore,
  MentalModelStore,
  SearchStore,
  WebhookStore,
} from '../../store/store.js';
import type { Operation } from '../types.js';
import { type ConsolidateStore, consolidateBank } from './consolidate.js';
import { consolidationCompleted } from '../webhooks/events.js';

/**
 * A run of the consolidation operation: consolidation itself, then the budgets and ledger of its
 * model calls, the orphan sweep's statistics, its `consolidation.completed` event and the mental
 * models refreshed after it.
 */
type ConsolidateRunStore = ConsolidateStore &
  LimitStore &
  LlmRequestStore &
  MentalModelStore &
  OperationStore &
  SearchStore &
  WebhookStore;

/** The operation kind of a consolidation run. */
export const CONSOLIDATE = 'consolidate';

/**
 * Queues a consolidation run for the bank, or returns the one already waiting: a run takes
 * every memory retained before it starts, so one pending run per bank is enough.
 */
async function queue(
  s: Deps<OperationStore, 'onEnqueue'>,
  projectId: string,
  bankId: string,
): Promise<{ operation: Operation; deduplicated: boolean }> {
  // Checked and queued in one step in the database: concurrent Retains queue one run.
  const q = await queueOperation(s, projectId, bankId, CONSOLIDATE, {}, { onceAmong: ['pending'] });
  return { operation: q.operation, deduplicated: !q.created };
}

/** After a Retain: queues a run unless the bank turned automatic observations off (`enable_observations`). */
export async function scheduleConsolidation(
  s: Deps<BankStore & OperationStore, 'onEnqueue'>,
  projectId: string,
  bankId: string,
): Promise<void> {
  const bank = await s.store.getBank(projectId, bankId);
  if (bank && effectiveConfig(bank.config).enable_observations) await queue(s, projectId, bankId);
}

/** `POST /banks/{bank}/consolidate`: the bank must exist; runs whatever `enable_observations` says. */
export async function requestConsolidation(
  s: Deps<BankStore & OperationStore, 'onEnqueue'>,
  projectId: string,
  bankId: string,
) {
  await requireBank(s, projectId, bankId);
  const { operation, deduplicated } = await queue(s, projectId, bankId);
  return { operation_id: operation.id, deduplicated, operation };
}

/**
 * Runs a queued consolidation a slice at a time (about SLICE_MS of work; the cursor is its
 * progress); `memories_created` counts the new observations. Stopped by the stored-memories
 * quota, the operation ends failed with the quota's message, keeping what it did.
 */
export const runConsolidateOperation: OperationRunner<
  Deps<ConsolidateRunStore, 'embedder' | 'limitDefaults' | 'llm' | 'now' | 'onEnqueue'>
> = async (s, op) => {
  // Each slice commits with its cursor: a run stopped by a spent model budget resumes where it was.
  await awaitBudget(s, op.projectId);
  // The slice's model calls are recorded for the bank (llm-requests), written when it ends.
  const ledger = new LlmLedger(s, op.projectId, op.bankId, 'consolidation');
  const metered = withMeteredModel(ledger.services(s, 'plan'), op.projectId, 'resumable');
  // First the sweep of orphaned observations, a page per slice (`prune`: where it goes on;
  // null once done), then the memories from the consolidation cursor.
  const progress = (op.progress ?? { prune: '' }) as { prune: string | null } & Partial<RunTotals>;
  // What the run did so far, for its consolidation.completed event.
  const totals: RunTotals = {
    created: progress.created ?? 0,
    updated: progress.updated ?? 0,
    deleted: progress.deleted ?? 0,
  };
  let prune = progress.prune;
  if (prune !== null) {
    const page = await s.store.pruneObservations(op.projectId, op.bankId, {
      after: prune,
      limit: PRUNE_PAGE,
    });
    prune = page.next;
    totals.deleted += page.pruned;
    if (prune !== null) return { more: { prune, ...totals } };
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
  totals.created += result.observations_created;
  totals.updated += result.observations_updated;
  // Stopped by the quota: the run failed, so no consolidation.completed.
  if (result.stopped) return { memories_created: result.observations_created, stopped: result.stopped };
  if (result.more) return { memories_created: result.observations_created, more: { prune: null, ...totals } };
  await consolidationCompleted(s, op.projectId, op.bankId, op.id, totals);
  // The run is over: mental models set to refresh after a consolidation get their turn.
  await scheduleAutoRefresh(s, op.projectId, op.bankId);
  return { memories_created: result.observations_created };
};

/** Observations a run created, updated and deleted (orphans swept), carried from slice to slice. */
interface RunTotals {
  created: number;
  updated: number;
  deleted: number;
}

/** Observations a consolidation slice checks for orphans. */
const PRUNE_PAGE = 500;
