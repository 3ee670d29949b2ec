import { requireBank } from './banks.js';
import { walkFare } from './budgets.js';
import { AppError, notFound } from './errors.js';
import { retainAsync } from './retain/retain-async.js';
import { sourceItems } from './retain/source.js';
import { forget, type ForgetStore, ownMemories } from './forget.js';
import type { Deps } from './services.js';
import type { BankStore, DocumentStore, LimitStore, MemoryStore, OperationStore } from '../store/store.js';

/** Documents of a bank, most recently updated first. */
export async function listDocuments(
  s: Deps<BankStore & DocumentStore & LimitStore, 'limitDefaults' | 'now'>,
  projectId: string,
  bankId: string,
  page: { limit: number; offset: number },
) {
  await requireBank(s, projectId, bankId);
  return s.store.listDocuments(projectId, bankId, { ...page, pay: walkFare(s, projectId) });
}

/** One document with its memories' text joined in order (its original text in chunks mode). */
export async function getDocument(
  s: Deps<BankStore & DocumentStore & MemoryStore>,
  projectId: string,
  bankId: string,
  id: string,
) {
  await requireBank(s, projectId, bankId);
  const doc = await s.store.getDocument(projectId, bankId, id);
  if (!doc) throw notFound(`document '${id}'`);
  const memories = await s.store.listMemories(projectId, bankId, { documentId: id }, { limit: 500 });
  const text = [...memories.items]
    .reverse()
    .map((m) => m.text)
    .join('\n');
  return { ...doc, text };
}

/** Deletes a document, its memories and everything derived from them, with the signed receipt. */
export async function deleteDocument(
  s: Deps<ForgetStore, 'keyring' | 'now' | 'onEnqueue' | 'recallCache'>,
  projectId: string,
  bankId: string,
  id: string,
) {
  const { receipt } = await forget(s, projectId, bankId, { kind: 'document', id });
  return { deleted: true as const, document_id: id, memories_deleted: ownMemories(receipt), receipt };
}

/**
 * Runs a document's extraction again from what it was retained from (its kept source), as a
 * queued Retain: charged like one, and replacing the document's memories when it runs (the
 * observations derived from them go too, as when the document is forgotten). A document
 * without a kept source (retained before sources were kept, or appended to) is a 409.
 */
export async function reprocessDocument(
  s: Deps<BankStore & DocumentStore & LimitStore & OperationStore, 'limitDefaults' | 'now' | 'onEnqueue'>,
  projectId: string,
  bankId: string,
  id: string,
) {
  await requireBank(s, projectId, bankId);
  const found = await s.store.documentSource(projectId, bankId, id);
  if (!found) throw notFound(`document '${id}'`);
  if (found.source === null) {
    throw new AppError(
      'conflict',
      `document '${id}' has no kept source to extract again (retained before mnemo kept sources, or appended to); retain it again instead`,
    );
  }
  const r = await retainAsync(s, projectId, bankId, {
    document_id: id,
    items: sourceItems(found.source),
    reprocess: true,
  });
  return {
    success: true as const,
    operation_id: r.operation_id,
    operation_ids: r.operation_ids,
    document_id: id,
    items_count: r.items_count,
  };
}
