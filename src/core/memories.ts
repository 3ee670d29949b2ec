import { requireBank } from './banks.js';
import { forget, type ForgetStore } from './forget.js';
import type { Deps } from './services.js';
import type { BankStore, LimitStore, MemoryStore } from '../store/store.js';
import { walkFare } from './budgets.js';
import type { MemoryFilter } from './types.js';

/** One page of a bank's memories, newest first. */
export async function listMemories(
  s: Deps<BankStore & LimitStore & MemoryStore, 'limitDefaults' | 'now'>,
  projectId: string,
  bankId: string,
  filter: MemoryFilter & { q?: string },
  page: { limit: number; cursor?: string; offset?: number },
) {
  await requireBank(s, projectId, bankId);
  return s.store.listMemories(projectId, bankId, filter, { ...page, pay: walkFare(s, projectId) });
}

/**
 * Deletes one memory with everything derived from it (core/forget.ts), answering with the
 * signed receipt; a missing (or malformed) id is 404.
 */
export async function deleteMemory(
  s: Deps<ForgetStore, 'keyring' | 'now' | 'onEnqueue' | 'recallCache'>,
  projectId: string,
  bankId: string,
  id: string,
) {
  const { receipt } = await forget(s, projectId, bankId, { kind: 'memory', id });
  return { deleted: true as const, id, receipt };
}
