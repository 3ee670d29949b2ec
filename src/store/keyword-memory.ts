/**
 * The keyword channel's postings of a bank, copied into this process so that a Recall computes
 * BM25 here (`keyword-memory-search.ts`) instead of in the database: the channel was about half
 * of a Recall's database CPU (docs/recall.md, "Keyword search in the process").
 *
 * A copy is only ever used at the state it was read at. It is labelled with the bank's version
 * (`BANK_VERSION`: its creation time and its generation, which every writer of its memories
 * moves under the bank's lock), and a Recall's snapshot reads the version with the bank's row:
 * the copy answers only when the two are equal, so its hits are the ones the database would give
 * in that snapshot, whatever other processes wrote. Otherwise the Recall searches in SQL as
 * without a copy, and the bank is reloaded in the background once it has been searched
 * LOAD_AFTER times at one version (more for a bank whose copies went stale unused, so that a
 * bank written between most of its searches stops being loaded). A copy also holds what the
 * function's filter reads of each memory, so filtered searches use it too. One load runs at a
 * time per process, in short snapshots of its own (`loadKeywordIndex`), and loads are spaced
 * (`LOAD_SPACING`); copies are bounded in bytes, least recently searched dropped first, and a
 * bank bigger than the bound is never copied. A copy holds the memories' rows and vectors as
 * well, and gives a Recall at its version its candidates (`candidatesAt`).
 */
import { candidatesFromCopy } from './copy-candidates.js';
import type { Db } from './db.js';
import { BankChanged, type KeywordIndex, loadKeywordIndex } from './keyword-index.js';
import type { Memory } from './records.js';

/** Default bound of the postings one process keeps (`MNEMO_KEYWORD_CACHE_MB`). */
export const DEFAULT_KEYWORD_CACHE_MB = 256;

/**
 * Searches of a bank at one version, without a copy of that version, that start a load. A bank
 * whose copy went stale before it saved what its load cost (SEARCH_SAVING_MS a search answered,
 * against the load's wall time) needs twice as many the next time (up to MAX_LOAD_AFTER), so
 * that a bank written about as often as it is searched stops being loaded for nothing; one
 * whose copy paid off is back at the start.
 */
const LOAD_AFTER = 8;
const MAX_LOAD_AFTER = 1024;

/**
 * What a search answered by a copy saves, in ms, at least: ~2.8 ms of database CPU on
 * PostgreSQL and ~5 ms of the embedded engine's thread at the 10k bench bank, less the
 * search's ~0.3 ms in the process (docs/recall.md).
 */
const SEARCH_SAVING_MS = 2;

/**
 * After a load of d ms, none starts for this many times d: loads take at most ~1/11 of one core
 * however a tenant alternates writes and searches to make its bank load again and again.
 */
const LOAD_SPACING = 10;

/** How long a bank found too big (or whose load failed) is not tried again, in ms. */
const RETRY_MS = 10 * 60_000;

/** Banks whose searches are counted at once; past it the counts start over. */
const DEMAND_ENTRIES = 10_000;

/** Counts of a process's copies, for metrics and tests. */
export interface KeywordMemoryStats {
  banks: number;
  bytes: number;
  /** Searches answered by a copy, and searches of a bank that had none of the snapshot's version. */
  hits: number;
  misses: number;
  /** Recalls whose candidates a copy gave (`candidatesAt`). */
  candidates: number;
  loads: number;
  /** Loads that found the bank too big, that found it written while they read it, and that failed. */
  skipped: number;
  abandoned: number;
  failed: number;
}

/** The copies of one process's store, shared by it and its snapshots. */
export class KeywordMemory {
  /** Copies by bank, least recently searched first. */
  readonly #banks = new Map<string, KeywordIndex>();
  /**
   * Banks searched without a copy: the version searched and how many times, the searches that
   * start a load (LOAD_AFTER, or more, see there), and the time before which none starts (a bank
   * found too big, or whose load failed).
   */
  readonly #demand = new Map<
    string,
    { version: string; searches: number; loadAfter: number; notBefore: number }
  >();
  #bytes = 0;
  #loading: Promise<void> | null = null;
  /** When the next load may start (`performance.now()`). */
  #nextLoadAt = 0;
  readonly #stats = { hits: 0, misses: 0, candidates: 0, loads: 0, skipped: 0, abandoned: 0, failed: 0 };

  readonly #loadAfter: number;
  readonly #loadSpacing: number;
  readonly #searchSavingMs: number;

  /**
   * `db`: the store's own connection (loads run in snapshots of their own); `maxBytes`: the bound
   * of all copies; `loadAfter`, `loadSpacing` and `searchSavingMs`: LOAD_AFTER, LOAD_SPACING and
   * SEARCH_SAVING_MS (tests set them).
   */
  constructor(
    private readonly db: Db,
    private readonly maxBytes: number,
    opts: { loadAfter?: number; loadSpacing?: number; searchSavingMs?: number } = {},
  ) {
    this.#loadAfter = opts.loadAfter ?? LOAD_AFTER;
    this.#loadSpacing = opts.loadSpacing ?? LOAD_SPACING;
    this.#searchSavingMs = opts.searchSavingMs ?? SEARCH_SAVING_MS;
  }

  /**
   * The bank's copy at `version` (the bank's version in the caller's snapshot), or null: then
   * the caller searches in SQL, and the search counts towards a load.
   */
  lookup(projectId: string, bankId: string, version: string): KeywordIndex | null {
    const key = `${projectId}\u0000${bankId}`;
    const index = this.#banks.get(key);
    if (index?.version === version) {
      this.#banks.delete(key);
      this.#banks.set(key, index);
      this.#stats.hits++;
      index.searches++;
      return index;
    }
    this.#stats.misses++;
    const d = this.#demandOf(key);
    if (index) {
      // Stale: the bank was written since (versions only move on). Was its load worth it?
      this.#drop(key, index);
      d.loadAfter =
        index.searches * this.#searchSavingMs >= index.loadMs
          ? this.#loadAfter
          : Math.min(2 * d.loadAfter, MAX_LOAD_AFTER);
    }
    if (d.version !== version) {
      d.version = version;
      d.searches = 0;
    }
    const now = performance.now();
    if (++d.searches >= d.loadAfter && !this.#loading && now >= this.#nextLoadAt && d.notBefore <= now) {
      d.searches = 0;
      this.#loading = this.#load(key, projectId, bankId).finally(() => {
        const end = performance.now();
        this.#nextLoadAt = end + this.#loadSpacing * (end - now);
        this.#loading = null;
      });
    }
    return null;
  }

  /**
   * The bank's copy as of its last search, without counting a search (`lookup` counts it once the
   * snapshot's version is known): a copy stays only while the bank's searches find it current.
   */
  current(projectId: string, bankId: string): KeywordIndex | null {
    return this.#banks.get(`${projectId}\u0000${bankId}`) ?? null;
  }

  /**
   * A Recall's candidates from the bank's copy (`candidatesFromCopy`) when it is at `version`,
   * the bank's version in the snapshot that found them; else null. It counts no search.
   */
  candidatesAt(
    projectId: string,
    bankId: string,
    ids: readonly string[],
    vector: Float32Array,
    version: string,
  ): (Memory & { similarity: number | null })[] | null {
    const index = this.#banks.get(`${projectId}\u0000${bankId}`);
    const rows = index?.version === version ? candidatesFromCopy(index, ids, vector) : null;
    if (rows) this.#stats.candidates++;
    return rows;
  }

  /** Settles when no load is running (for tests and benches). */
  async idle(): Promise<void> {
    while (this.#loading) await this.#loading;
  }

  stats(): KeywordMemoryStats {
    return { banks: this.#banks.size, bytes: this.#bytes, ...this.#stats };
  }

  async #load(key: string, projectId: string, bankId: string): Promise<void> {
    this.#stats.loads++;
    const started = performance.now();
    let index: KeywordIndex | null;
    try {
      index = await loadKeywordIndex(this.db, projectId, bankId, this.maxBytes);
    } catch (err) {
      // Written meanwhile: loaded again when searched enough at its new version.
      if (err instanceof BankChanged) this.#stats.abandoned++;
      else {
        // A copy is an optimisation: its bank is searched in SQL meanwhile.
        this.#stats.failed++;
        this.#later(key);
      }
      return;
    }
    this.#drop(key);
    if (!index) {
      this.#stats.skipped++;
      this.#later(key);
      return;
    }
    index.loadMs = performance.now() - started;
    this.#demandOf(key).notBefore = 0;
    for (const [other, copy] of this.#banks) {
      if (this.#bytes + index.bytes <= this.maxBytes) break;
      this.#drop(other, copy);
    }
    this.#banks.set(key, index);
    this.#bytes += index.bytes;
  }

  /** Not loaded again for RETRY_MS. */
  #later(key: string): void {
    this.#demandOf(key).notBefore = performance.now() + RETRY_MS;
  }

  /** The bank's entry in `#demand`, made when it has none (the map starts over past DEMAND_ENTRIES). */
  #demandOf(key: string) {
    let d = this.#demand.get(key);
    if (!d) {
      if (this.#demand.size >= DEMAND_ENTRIES) this.#demand.clear();
      d = { version: '', searches: 0, loadAfter: this.#loadAfter, notBefore: 0 };
      this.#demand.set(key, d);
    }
    return d;
  }

  #drop(key: string, copy = this.#banks.get(key)): void {
    if (!copy) return;
    this.#banks.delete(key);
    this.#bytes -= copy.bytes;
  }
}
