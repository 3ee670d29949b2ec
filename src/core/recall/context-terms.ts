import { termFrequencies } from '../../text/terms.js';
import type { Deps } from '../services.js';
import type { IntakeStore } from '../../store/store.js';
import type { NewMemory } from '../types.js';

/**
 * Neighbour context indexing. A chat turn rarely repeats what it answers: "Melanie: I painted
 * a sunrise" answers "what did you paint lately?" one turn before. So each memory is also
 * indexed, at a lower weight, by the terms of the memories retained around it in the same
 * conversation. On the LoCoMo development split this is the largest single gain of the
 * keyword channel (recall@10 from about .62 to .74).
 */

/** Memories before and after whose terms join a memory's index. */
export const CONTEXT_BEFORE = 2;
export const CONTEXT_AFTER = 1;
/** Weight of a neighbour's term occurrence, against 1 for the memory's own. */
export const CONTEXT_WEIGHT = 0.5;

/**
 * Metadata keys that name a conversation, first present wins. The store's `latestInSession`
 * and the `memories_session` index use the same keys in the same order.
 */
export const SESSION_KEYS = ['session_id', 'session', 'conversation_id', 'thread_id'] as const;

/** The conversation named by a memory's metadata, as the store reads it (`metadata->>key`). */
export function sessionOf(metadata: Record<string, unknown>): string | null {
  for (const key of SESSION_KEYS) {
    const v = metadata[key];
    if (v === undefined || v === null) continue;
    return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : null;
  }
  return null;
}

/**
 * The group a memory's neighbours come from: its document, else its conversation (session
 * metadata), else null: no neighbours. The items of one request are not a sequence by
 * themselves (a client may send unrelated facts together), so they need one of the two.
 */
export function contextGroup(m: {
  document_id: string | null;
  metadata: Record<string, unknown>;
}): string | null {
  if (m.document_id !== null) return `document\u0000${m.document_id}`;
  const session = sessionOf(m.metadata);
  return session === null ? null : `session\u0000${session}`;
}

/**
 * Adds neighbour context to the `terms` of memories about to be stored (in retain order): the
 * CONTEXT_BEFORE memories before and CONTEXT_AFTER after each one in its document or
 * conversation, at CONTEXT_WEIGHT. Memories retained one per request still get the ones before them: for a
 * conversation named by session metadata, the bank's latest memories of that conversation are
 * read first. (A document's earlier memories are not: a repeated document id usually replaces
 * them.)
 */
export async function addNeighbourContext(
  s: Deps<IntakeStore>,
  projectId: string,
  bankId: string,
  memories: NewMemory[],
): Promise<void> {
  const groups = new Map<string, NewMemory[]>();
  for (const m of memories) {
    const key = contextGroup(m);
    if (key === null) continue;
    // Appended in place: a copy per member is quadratic in a conversation's length.
    const group = groups.get(key);
    if (group) group.push(m);
    else groups.set(key, [m]);
  }
  const own = new Map(memories.map((m) => [m, new Map(m.terms)]));
  for (const [key, members] of groups) {
    const before: Map<string, number>[] = [];
    const session = key.startsWith('session\u0000') ? sessionOf(members[0]!.metadata) : null;
    if (session !== null) {
      const stored = await s.store.latestInSession(projectId, bankId, session, CONTEXT_BEFORE);
      for (const r of stored.reverse())
        before.push(termFrequencies(r.context ? `${r.text}\n${r.context}` : r.text));
    }
    const sequence = [...before, ...members.map((m) => own.get(m)!)];
    members.forEach((m, i) => {
      const at = before.length + i;
      for (let j = at - CONTEXT_BEFORE; j <= at + CONTEXT_AFTER; j++) {
        const neighbour = sequence[j];
        if (j === at || !neighbour) continue;
        for (const [term, f] of neighbour) m.terms.set(term, (m.terms.get(term) ?? 0) + CONTEXT_WEIGHT * f);
      }
    });
  }
}
