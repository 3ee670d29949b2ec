import { scheduleConsolidation } from './consolidate/schedule.js';
import { enqueueOnce, type OperationRunner, sliceDeadline } from './operations.js';
import type { Deps } from './services.js';
import type { OperationStore, BankStore, MemoryStore } from '../store/store.js';

/** The operation kind that rewrites a bank's vectors with the server's embedder. */
export const REEMBED = 'reembed';

/**
 * Memories embedded per batch (one embedder call, one UPDATE): small enough that the UPDATE of
 * their vectors holds the embedded engine (and the event loop with it) only briefly.
 */
const BATCH = 64;

/**
 * Queues a re-embed of the bank unless one is waiting or running. Called when a Retain or Recall
 * finds the bank's vectors stale: the embedder was changed by configuration.
 */
export const scheduleReembed = (s: Deps<OperationStore, 'onEnqueue'>, projectId: string, bankId: string) =>
  enqueueOnce(s, projectId, bankId, REEMBED, {});

/**
 * Embeds every memory of the bank again (observations too) and then records the server's
 * embedder on the bank, which turns its semantic channel back on. Memories retained meanwhile
 * already carry new vectors; embedding them again is harmless, so a run that is cut off simply
 * goes on from the last recorded page. Runs in slices of about SLICE_MS (the listing cursor is
 * the progress), so other tenants' work runs between them.
 */
export const runReembedOperation: OperationRunner<
  Deps<BankStore & MemoryStore & OperationStore, 'embedder' | 'onEnqueue'>
> = async (s, op) => {
  let cursor = (op.progress as { cursor?: string } | null)?.cursor;
  const deadline = sliceDeadline();
  for (;;) {
    op.signal.throwIfAborted();
    if (cursor && deadline.over()) return { more: { cursor } };
    const page = await s.store.listMemories(op.projectId, op.bankId, {}, { limit: BATCH, cursor });
    if (page.items.length) {
      const vectors = await s.embedder.embed(
        page.items.map((m) => m.text),
        op.signal,
      );
      await s.store.setEmbeddings(
        op.projectId,
        op.bankId,
        page.items.map((m, i) => ({ id: m.id, embedding: vectors[i]! })),
      );
    }
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  await s.store.updateBank(op.projectId, op.bankId, { embedder: s.embedder.id });
  await scheduleConsolidation(s, op.projectId, op.bankId);
  return {};
};
