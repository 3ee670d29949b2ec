import { requireBank } from './banks.js';
import { forget } from './forget.js';
import type { Services } from './services.js';
import type { MemoryFilter } from './types.js';

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

/**
 * Deletes one memory with everything derived from it (core/forget.ts), answering with the
 * signed receipt; a missing (or malformed) id is 404.
 */
export async function deleteMemory(s: Services, projectId: string, bankId: string, id: string) {
  const { receipt } = await forget(s, projectId, bankId, { kind: 'memory', id });
  return { deleted: true as const, id, receipt };
}
