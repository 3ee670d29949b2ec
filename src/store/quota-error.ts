/**
 * A write refused because it would take the project past its `stored_memories` quota, found
 * under the project's lock in the writing transaction (nothing of it was written). Core turns
 * it into the quota's 429.
 */
export class StoredQuotaExceeded extends Error {
  constructor(
    readonly limit: number,
    readonly stored: number,
    readonly adding: number,
  ) {
    super(`stored_memories quota of ${limit} reached (${stored} stored, ${adding} more)`);
    this.name = 'StoredQuotaExceeded';
  }
}
