import { requireBank } from './banks.js';
import { notFound } from './errors.js';
import type { Services } from './services.js';
import type { MemoryFilter } from './types.js';
import { isUuid } from './ids.js';

/** One page of a bank's memories, newest first. */
export async function listMemories(
  s: Services,
  projectId: string,
  bankId: string,
  filter: MemoryFilter & { q?: string },
  page: { limit: number; cursor?: string; offset?: number },
) {
  await requireBank(s, projectId, bankId);
  return s.store.listMemories(projectId, bankId, filter, page);
}

/** Deletes one memory; a missing (or malformed) id is 404. */
export async function deleteMemory(s: Services, projectId: string, bankId: string, id: string) {
  await requireBank(s, projectId, bankId);
  if (!isUuid(id) || !(await s.store.deleteMemory(projectId, bankId, id))) throw notFound(`memory '${id}'`);
  return { deleted: true as const, id };
}
