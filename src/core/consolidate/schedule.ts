import { effectiveConfig } from '../bank-config.js';
import { requireBank } from '../banks.js';
import { type OperationRunner, queueOperation } from '../operations.js';
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

/** Runs a queued consolidation; `memories_created` counts the new observations. */
export const runConsolidateOperation: OperationRunner = async (s, op) => {
  const result = await consolidateBank(s, op.projectId, op.bankId, { signal: op.signal });
  return { memories_created: result.observations_created };
};
