import type { Bank } from '../types.js';

/**
 * Recall answers kept in this process while the banks they were computed from are unchanged.
 *
 * An entry's key holds each searched bank's `generation`, which every write that can change a
 * Recall answer moves on in the write's own transaction (store/sql/bank-lock.ts), and
 * the bank row is read from the database on every Recall, so an answer is never served after a
 * write has committed, by this process or any other on the same database. Entries also expire
 * after `ttlMs`: without `query_timestamp` a query is read against the current time ("last
 * week", recency), which moves on by itself. Least recently used entries go first when full.
 */
export class RecallCache<T> {
  readonly #entries = new Map<string, { at: number; value: T }>();

  constructor(
    readonly maxEntries: number,
    readonly ttlMs: number,
  ) {}

  get(key: string, now: number): T | undefined {
    const hit = this.#entries.get(key);
    if (!hit) return undefined;
    this.#entries.delete(key);
    if (now - hit.at > this.ttlMs) return undefined;
    this.#entries.set(key, hit);
    return hit.value;
  }

  set(key: string, value: T, now: number): void {
    if (this.maxEntries <= 0) return;
    this.#entries.delete(key);
    this.#entries.set(key, { at: now, value });
    while (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }

  /**
   * Drops every answer computed from this bank (keys made by `recallCacheKey`): after a forget
   * they are never served (the bank's generation moved), and now they are not kept either.
   * Returns how many went.
   */
  forgetBank(projectId: string, bankId: string): number {
    let n = 0;
    for (const key of [...this.#entries.keys()]) {
      if (keyBanks(key, projectId).includes(bankId)) {
        this.#entries.delete(key);
        n++;
      }
    }
    return n;
  }

  get size(): number {
    return this.#entries.size;
  }
}

/** The banks a `recallCacheKey` key of this project names (none for another project's key). */
function keyBanks(key: string, projectId: string): string[] {
  try {
    const [project, banks] = JSON.parse(key) as [unknown, [string, number][]];
    return project === projectId && Array.isArray(banks) ? banks.map((b) => b[0]) : [];
  } catch {
    return [];
  }
}

/**
 * The key of a Recall over these banks with this embedder (the query's vector and whether the
 * bank's vectors are comparable depend on it), or null when the answer must not be cached: a bank
 * with managed encryption keeps no plaintext outside the request that asked for it.
 */
export function recallCacheKey(
  projectId: string,
  banks: Bank[],
  embedderId: string,
  request: unknown,
): string | null {
  if (banks.some((b) => b.config.encryption === 'managed')) return null;
  return JSON.stringify([projectId, banks.map((b) => [b.id, b.generation]), embedderId, request]);
}
