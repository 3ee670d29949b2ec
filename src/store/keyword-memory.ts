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
 * bank bigger than the bound is never copied.
 */
import type { Db, Queryable } from './db.js';

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

/** Postings a load reads per snapshot (see `loadKeywordIndex`). */
const PAGE_POSTINGS = 10_000;

/** Bytes of a posting (two copies of 12) besides the typed arrays' headers, of a memory and of a term: estimates. */
const POSTING_BYTES = 24;
const MEMORY_BYTES = 100;
const TERM_BYTES = 80;

/**
 * A bank's version over alias `b` of `banks`: a bank deleted and created again under its id
 * starts its generation over, so its creation time (to the microsecond) is part of it.
 */
export const BANK_VERSION = `(floor(extract(epoch FROM b.created_at) * 1000000)::bigint::text || ':' || b.generation::text)`;

/** A bank's postings at one version, numbered: memories by id order (so that id order is number order), terms by the database's order of them. */
export interface KeywordIndex {
  version: string;
  /** The function's `stats`: memory count (at least 1) and average length (at least 1). */
  n: number;
  avgdl: number;
  /** Memory ids (text) by number, ascending. */
  ids: string[];
  /** Term number by term; numbers follow the terms' order in the database (its collation). */
  terms: Map<string, number>;
  /** By term number: document frequency and IDF (PostgreSQL's `ln`, at `n`). */
  df: Int32Array;
  idf: Float64Array;
  /** Postings by term, each term's from `start[t]` to `start[t + 1]` in impact order (tf desc, dl, id). */
  start: Int32Array;
  doc: Int32Array;
  tf: Float32Array;
  /** A posting's length; NaN where the column is NULL. */
  dl: Float32Array;
  /** The same postings by memory: memory `d`'s from `docStart[d]` to `docStart[d + 1]`. */
  docStart: Int32Array;
  docTerm: Int32Array;
  docTf: Float32Array;
  docDl: Float32Array;
  /** A search's working space, a float per memory, NaN between searches (each runs without yielding). */
  scratch: Float64Array;
  /** What the function's filter reads of memory `d`: its type (a number into `typeNames`), ... */
  typeNames: string[];
  type: Uint8Array;
  /** ... its document (a number of `documentIds`, -1 for none), ... */
  documentIds: Map<string, number>;
  document: Int32Array;
  /** ... when it was mentioned (epoch microseconds, the column's precision; NaN for none) and its tags. */
  mentioned: Float64Array;
  tags: (readonly string[] | null)[];
  /** What the copy takes, estimated. */
  bytes: number;
  /** Searches it answered, and how long its load took (ms, wall). */
  searches: number;
  loadMs: number;
}

/** The tags of every untagged memory (not one empty array each). */
const NO_TAGS: readonly string[] = Object.freeze([]);

/** What a bank of `postings`, `memories` and `terms` takes as a copy (and `tags`, tags in all). */
const estimate = (postings: number, memories: number, terms: number, tags = 0) =>
  postings * POSTING_BYTES + memories * (MEMORY_BYTES + 8 + 12 + 13) + terms * (TERM_BYTES + 12) + tags * 8;

/** A load found the bank written (its version moved) between two of its snapshots. */
export class BankChanged extends Error {}

/**
 * Reads bank `bankId`'s postings, statistics and memories and builds its copy; null for no such
 * bank, or one whose copy would take more than `maxBytes`. Read in several short snapshots, each
 * checking the bank's version first (`BankChanged` when it moved): a snapshot holds the embedded
 * engine, and one reading a 10k bank's postings held it for ~0.3 s, every Recall waiting. Equal
 * versions are the same data, as every write moves the version under the bank's lock.
 */
export async function loadKeywordIndex(
  db: Db,
  projectId: string,
  bankId: string,
  maxBytes = Number.POSITIVE_INFINITY,
  pagePostings = PAGE_POSTINGS,
): Promise<KeywordIndex | null> {
  const params = [projectId, bankId];
  const first = await db.transaction(async (q) => {
    const [bank] = await q.query<{ version: string; n: number; avgdl: number }>(
      `SELECT ${BANK_VERSION} AS version, greatest(b.memory_count, 1)::float8 AS n,
              greatest(b.term_total::float8 / greatest(b.memory_count, 1), 1) AS avgdl
       FROM banks b WHERE b.project_id = $1 AND b.id = $2`,
      params,
    );
    if (!bank) return null;
    // The IDF as the function computes it (same expression, same types), its text the exact
    // float: V8's Math.log and PostgreSQL's ln differ in the last bit for some arguments.
    const termRows = await q.query<{ term: string; df: number; idf: string }>(
      `SELECT bt.term, bt.df, ln(1 + ($3::float8 - bt.df + 0.5) / (bt.df + 0.5))::text AS idf
       FROM bank_terms bt WHERE bt.project_id = $1 AND bt.bank_id = $2 AND bt.df > 0 ORDER BY bt.term`,
      [...params, bank.n],
    );
    return { ...bank, termRows };
  }, 'snapshot');
  if (!first) return null;
  const { version, n, avgdl, termRows } = first;
  let postingCount = 0;
  for (const r of termRows) postingCount += r.df;
  if (estimate(postingCount, n, termRows.length) > maxBytes) return null;
  /** `read` in a snapshot of the bank at `version`. */
  const atVersion = <T>(read: (q: Queryable) => Promise<T>) =>
    db.transaction(async (q) => {
      const [bank] = await q.query<{ version: string }>(
        `SELECT ${BANK_VERSION} AS version FROM banks b WHERE b.project_id = $1 AND b.id = $2`,
        params,
      );
      if (bank?.version !== version) throw new BankChanged();
      return read(q);
    }, 'snapshot');
  // Memories numbered in id order (uuid order is byte order, which the canonical text keeps,
  // and the function's tie-break), with what the filter reads of them.
  const memoryRows = await atVersion((q) =>
    q.query<{
      id: string;
      type: string;
      document_id: string | null;
      mentioned: number | null;
      tags: string | null;
    }>(
      // Tags as JSON: the drivers read an array a character at a time.
      `SELECT m.id::text AS id, m.type, m.document_id,
         (extract(epoch FROM m.mentioned_at) * 1000000)::float8 AS mentioned, to_json(m.tags)::text AS tags
       FROM memories m WHERE m.project_id = $1 AND m.bank_id = $2 ORDER BY m.id`,
      params,
    ),
  );
  // The postings in the function's impact order within each term (tf descending, dl ascending
  // with NULL last, the memory), by ranges of whole terms of about `pagePostings`.
  const postingRows: { term: string; id: string; tf: number; dl: number | null }[] = [];
  for (let from = 0; from < termRows.length; ) {
    let to = from;
    for (let sum = 0; to < termRows.length && (to === from || sum + termRows[to]!.df <= pagePostings); to++)
      sum += termRows[to]!.df;
    const page = await atVersion((q) =>
      q.query<{ term: string; id: string; tf: number; dl: number | null }>(
        `SELECT t.term, t.memory_id::text AS id, t.tf, t.dl FROM memory_terms t
         WHERE t.project_id = $1 AND t.bank_id = $2 AND t.term >= $3 AND t.term <= $4
         ORDER BY t.term, t.tf DESC, t.dl, t.memory_id`,
        [...params, termRows[from]!.term, termRows[to - 1]!.term],
      ),
    );
    for (const r of page) postingRows.push(r);
    from = to;
  }
  const terms = new Map<string, number>();
  const df = new Int32Array(termRows.length);
  const idf = new Float64Array(termRows.length);
  for (const r of termRows) {
    df[terms.size] = r.df;
    idf[terms.size] = Number(r.idf);
    terms.set(r.term, terms.size);
  }
  const termCount = terms.size;
  const memoryCount = memoryRows.length;
  const docOf = new Map<string, number>();
  for (const [d, m] of memoryRows.entries()) docOf.set(m.id, d);
  // The postings as read, in typed arrays (no object per posting), counted by term.
  const rowTerm = new Int32Array(postingRows.length);
  const rowDoc = new Int32Array(postingRows.length);
  const rowTf = new Float32Array(postingRows.length);
  const rowDl = new Float32Array(postingRows.length);
  const start = new Int32Array(termCount + 1);
  let total = 0;
  for (const r of postingRows) {
    const t = terms.get(r.term);
    const d = docOf.get(r.id);
    if (t === undefined || d === undefined) continue;
    rowTerm[total] = t;
    rowDoc[total] = d;
    rowTf[total] = r.tf;
    rowDl[total] = r.dl ?? Number.NaN;
    start[t + 1]!++;
    total++;
  }
  for (let t = 0; t < termCount; t++) start[t + 1]! += start[t]!;
  // By term (a counting sort), then each term's in impact order: tf descending, dl ascending
  // with NULL last (the function's ORDER BY), then the memory.
  const order = new Int32Array(total);
  const place = start.slice(0, termCount);
  for (let i = 0; i < total; i++) order[place[rowTerm[i]!]!++] = i;
  const doc = new Int32Array(total);
  const tf = new Float32Array(total);
  const dl = new Float32Array(total);
  const docStart = new Int32Array(memoryCount + 1);
  for (const [at, i] of order.entries()) {
    doc[at] = rowDoc[i]!;
    tf[at] = rowTf[i]!;
    dl[at] = rowDl[i]!;
    docStart[rowDoc[i]! + 1]!++;
  }
  // The same postings by memory, each memory's terms in term order (a counting sort).
  for (let d = 0; d < memoryCount; d++) docStart[d + 1]! += docStart[d]!;
  const next = docStart.slice(0, memoryCount);
  const docTerm = new Int32Array(total);
  const docTf = new Float32Array(total);
  const docDl = new Float32Array(total);
  for (let t = 0; t < termCount; t++)
    for (let i = start[t]!; i < start[t + 1]!; i++) {
      const j = next[doc[i]!]!++;
      docTerm[j] = t;
      docTf[j] = tf[i]!;
      docDl[j] = dl[i]!;
    }
  const ids: string[] = new Array(memoryCount);
  const typeNames: string[] = [];
  const type = new Uint8Array(memoryCount);
  const documentIds = new Map<string, number>();
  const document = new Int32Array(memoryCount).fill(-1);
  const mentioned = new Float64Array(memoryCount).fill(Number.NaN);
  const tags: (readonly string[] | null)[] = new Array(memoryCount).fill(null);
  /** One copy of each tag's string, whichever memory read it. */
  const tagNames = new Map<string, string>();
  let tagCount = 0;
  for (const [d, m] of memoryRows.entries()) {
    ids[d] = m.id;
    let code = typeNames.indexOf(m.type);
    if (code < 0) code = typeNames.push(m.type) - 1;
    type[d] = code;
    if (m.document_id !== null) {
      if (!documentIds.has(m.document_id)) documentIds.set(m.document_id, documentIds.size);
      document[d] = documentIds.get(m.document_id)!;
    }
    if (m.mentioned !== null) mentioned[d] = m.mentioned;
    if (m.tags === '[]') tags[d] = NO_TAGS;
    else if (m.tags !== null) {
      tags[d] = (JSON.parse(m.tags) as string[]).map((t) => {
        if (!tagNames.has(t)) tagNames.set(t, t);
        return tagNames.get(t)!;
      });
      tagCount += tags[d]!.length;
    }
  }
  return {
    version,
    n,
    avgdl,
    ids,
    terms,
    df,
    idf,
    start,
    doc,
    tf,
    dl,
    docStart,
    docTerm,
    docTf,
    docDl,
    scratch: new Float64Array(memoryCount).fill(Number.NaN),
    typeNames,
    type,
    documentIds,
    document,
    mentioned,
    tags,
    bytes: estimate(total, memoryCount, termCount, tagCount) + documentIds.size * MEMORY_BYTES,
    searches: 0,
    loadMs: 0,
  };
}

/** Counts of a process's copies, for metrics and tests. */
export interface KeywordMemoryStats {
  banks: number;
  bytes: number;
  /** Searches answered by a copy, and searches of a bank that had none of the snapshot's version. */
  hits: number;
  misses: number;
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
  /** Searches without a copy, by bank: the version searched and how many times. */
  readonly #demand = new Map<string, { version: string; searches: number }>();
  /** Searches that start a bank's load, where not `#loadAfter` (see LOAD_AFTER). */
  readonly #threshold = new Map<string, number>();
  /** Banks not to load again before this time (too big, or a load failed). */
  readonly #notBefore = new Map<string, number>();
  #bytes = 0;
  #loading: Promise<void> | null = null;
  /** When the next load may start (`performance.now()`). */
  #nextLoadAt = 0;
  readonly #stats = { hits: 0, misses: 0, loads: 0, skipped: 0, abandoned: 0, failed: 0 };

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
    const threshold = this.#threshold.get(key) ?? this.#loadAfter;
    if (index) {
      // Stale: the bank was written since (versions only move on). Was its load worth it?
      this.#drop(key, index);
      if (this.#threshold.size >= DEMAND_ENTRIES) this.#threshold.clear();
      if (index.searches * this.#searchSavingMs >= index.loadMs) this.#threshold.delete(key);
      else this.#threshold.set(key, Math.min(2 * threshold, MAX_LOAD_AFTER));
    }
    let d = this.#demand.get(key);
    if (d?.version !== version) {
      if (this.#demand.size >= DEMAND_ENTRIES) this.#demand.clear();
      d = { version, searches: 0 };
      this.#demand.set(key, d);
    }
    const now = performance.now();
    if (
      ++d.searches >= (this.#threshold.get(key) ?? this.#loadAfter) &&
      !this.#loading &&
      now >= this.#nextLoadAt &&
      (this.#notBefore.get(key) ?? 0) <= now
    ) {
      this.#demand.delete(key);
      this.#loading = this.#load(key, projectId, bankId).finally(() => {
        const end = performance.now();
        this.#nextLoadAt = end + this.#loadSpacing * (end - now);
        this.#loading = null;
      });
    }
    return null;
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
    this.#notBefore.delete(key);
    for (const [other, copy] of this.#banks) {
      if (this.#bytes + index.bytes <= this.maxBytes) break;
      this.#drop(other, copy);
    }
    this.#banks.set(key, index);
    this.#bytes += index.bytes;
  }

  /** Not loaded again for RETRY_MS. */
  #later(key: string): void {
    if (this.#notBefore.size >= DEMAND_ENTRIES) this.#notBefore.clear();
    this.#notBefore.set(key, performance.now() + RETRY_MS);
  }

  #drop(key: string, copy = this.#banks.get(key)): void {
    if (!copy) return;
    this.#banks.delete(key);
    this.#bytes -= copy.bytes;
  }
}
