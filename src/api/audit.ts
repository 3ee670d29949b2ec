import type { AuditInput, AuditStore } from '../store/store.js';

/**
 * Unauthenticated refusals of one project kept as full entries per minute; the rest of the
 * minute is one aggregate entry with its count, so a flood of bad credentials cannot grow the
 * trail without bound (shared by every process: counted in the database).
 */
export const REFUSALS_IN_FULL_PER_MINUTE = 100;

/** Appends an audit entry; an unauthenticated refusal (401, no actor) goes through the per-minute bound. */
export function appendAuditEntry(store: AuditStore, entry: AuditInput): Promise<void> {
  return entry.status === 401 && entry.actorType === 'unknown'
    ? store.appendRefusal(entry, REFUSALS_IN_FULL_PER_MINUTE)
    : store.appendAudit(entry);
}
