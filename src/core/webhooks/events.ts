import type { WebhookEventType } from '../../contract/webhooks.js';
import type { Deps } from '../services.js';
import type { DocumentStore, WebhookStore } from '../../store/store.js';

/** One event as its webhooks receive it (Hindsight's envelope). */
interface EventInput {
  /** Names the event within its operation (a re-run records it once). */
  key: string;
  data: Record<string, unknown>;
}

/**
 * Records events of one operation for every webhook of the bank subscribed to their type, to be
 * delivered by a worker (durably: the deliveries are rows). Costs one query when the bank has
 * no webhook for the type.
 */
async function recordEvents<D extends Deps<WebhookStore, 'now' | 'onEnqueue'>>(
  s: D,
  projectId: string,
  bankId: string,
  type: WebhookEventType,
  operationId: string,
  events: (s: D) => Promise<EventInput[]>,
): Promise<void> {
  const hooks = await s.store.listWebhooks(projectId, bankId);
  if (!hooks.some((w) => w.enabled && w.event_types.includes(type))) return;
  const timestamp = s.now().toISOString();
  const list = await events(s);
  const added = await s.store.enqueueWebhookEvents(
    projectId,
    bankId,
    list.map((e) => ({
      eventType: type,
      eventKey: `${type}:${operationId}:${e.key}`,
      body: JSON.stringify({
        event: type,
        bank_id: bankId,
        operation_id: operationId,
        status: 'completed',
        timestamp,
        data: e.data,
      }),
    })),
  );
  if (added > 0) s.onEnqueue?.();
}

/** What a completed Retain says of one item. */
export interface RetainedItem {
  document_id?: string | null;
  tags?: string[];
}

/**
 * `retain.completed`, one event per item of the request (as Hindsight sends it): the item's
 * document, its tags, and how many memories that document holds now (null without a document).
 */
export function retainCompleted(
  s: Deps<WebhookStore & DocumentStore, 'now' | 'onEnqueue'>,
  projectId: string,
  bankId: string,
  operationId: string,
  req: { document_id?: string; items: RetainedItem[] },
): Promise<void> {
  return recordEvents(s, projectId, bankId, 'retain.completed', operationId, async (svc) => {
    const docs = req.items.map((item) => item.document_id ?? req.document_id ?? null);
    // Every document's count in one query, however many documents the request named.
    const named = [...new Set(docs.filter((d): d is string => d !== null))];
    const counts = await svc.store.documentMemoryCounts(projectId, bankId, named);
    return req.items.map((item, i) => {
      const doc = docs[i] ?? null;
      return {
        key: String(i),
        data: {
          document_id: doc,
          tags: item.tags ?? [],
          memory_unit_count: doc === null ? null : (counts.get(doc) ?? 0),
        },
      };
    });
  });
}

/** `consolidation.completed`, once per finished consolidation run, with its counts. */
export function consolidationCompleted(
  s: Deps<WebhookStore, 'now' | 'onEnqueue'>,
  projectId: string,
  bankId: string,
  operationId: string,
  counts: { created: number; updated: number; deleted: number },
): Promise<void> {
  return recordEvents(s, projectId, bankId, 'consolidation.completed', operationId, async () => [
    {
      key: 'run',
      data: {
        observations_created: counts.created,
        observations_updated: counts.updated,
        observations_deleted: counts.deleted,
        error_message: null,
      },
    },
  ]);
}
