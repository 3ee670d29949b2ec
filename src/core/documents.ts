import { requireBank } from './banks.js';
import { notFound } from './errors.js';
import { forget, ownMemories } from './forget.js';
import type { Services } from './services.js';

/** Documents of a bank, most recently updated first. */
export async function listDocuments(
  s: Services,
  projectId: string,
  bankId: string,
  page: { limit: number; offset: number },
) {
  await requireBank(s, projectId, bankId);
  return s.store.listDocuments(projectId, bankId, page);
}

/** One document with its memories' text joined in order (its original text in chunks mode). */
export async function getDocument(s: Services, projectId: string, bankId: string, id: string) {
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
export async function deleteDocument(s: Services, projectId: string, bankId: string, id: string) {
  const { receipt } = await forget(s, projectId, bankId, { kind: 'document', id });
  return { deleted: true as const, document_id: id, memories_deleted: ownMemories(receipt), receipt };
}
