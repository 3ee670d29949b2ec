/**
 * A bank's keyword postings and memories copied into the process (`KeywordIndex`) and how they
 * are read (`loadKeywordIndex`); `keyword-memory.ts` keeps them per process,
 * `keyword-memory-search.ts` searches them and `copy-candidates.ts` reads a Recall's candidates
 * from them.
 */
import type { Db, Queryable } from './db.js';
import type { Memory } from './records.js';
import { type CopyRow, readCopyPage } from './sql/memory-rows.js';

/** Postings a load reads per snapshot (see `loadKeywordIndex`). */
const PAGE_POSTINGS = 10_000;
/** Memories a load reads per snapshot. */
const PAGE_MEMORIES = 1_000;

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
  /** ... when it was mentioned (epoch microseconds, the column's precision; NaN for none) ... */
  mentioned: Float64Array;
  /**
   * ... and memory `d` as `getCandidates` reads it, its tags among its fields (frozen, shared by
   * every Recall: each gets a copy of the object), and its vector, `vectors` from `vectorStart[d]`
   * to `vectorStart[d + 1]` (none when empty), so that a Recall's candidates come from here
   * (`candidatesFromCopy`).
   */
  memories: readonly Readonly<Memory>[];
  vectors: Float32Array;
  vectorStart: Int32Array;
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
 * Reads bank `bankId`'s postings, statistics and memories (as Recall reads them, vectors
 * included) and builds its copy; null for no such bank, or one whose copy would take more than
 * `maxBytes`. Read in several short snapshots, each
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
  pageMemories = PAGE_MEMORIES,
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
  // Each memory's row takes ROW_BYTES at least: a bank too big is known before its rows are read.
  if (estimate(postingCount, n, termRows.length) + n * ROW_BYTES > maxBytes) return null;
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
  // and the function's tie-break), each as Recall reads it, in pages of whole rows.
  const memoryRows: CopyRow[] = [];
  let rowBytes = 0;
  for (let after: string | null = null; ; ) {
    const page = await atVersion((q) => readCopyPage(q, projectId, bankId, after, pageMemories));
    for (const r of page) {
      memoryRows.push(r);
      rowBytes += rowEstimate(r);
    }
    if (estimate(postingCount, n, termRows.length) + rowBytes > maxBytes) return null;
    if (page.length < pageMemories) break;
    after = page.at(-1)!.id;
  }
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
  // The pages come in term order (the order of `termRows`, the same column's), each term's
  // postings in impact order: they go into place as they come.
  const start = new Int32Array(termCount + 1);
  let doc = new Int32Array(postingRows.length);
  let tf = new Float32Array(postingRows.length);
  let dl = new Float32Array(postingRows.length);
  const docStart = new Int32Array(memoryCount + 1);
  let total = 0;
  let last = 0;
  for (const r of postingRows) {
    const t = terms.get(r.term);
    const d = docOf.get(r.id);
    if (t === undefined || d === undefined) continue;
    if (t < last) throw new Error('keyword postings out of term order');
    for (; last < t; last++) start[last + 1] = total;
    doc[total] = d;
    tf[total] = r.tf;
    dl[total] = r.dl ?? Number.NaN;
    docStart[d + 1]!++;
    total++;
  }
  for (; last < termCount; last++) start[last + 1] = total;
  // Rows of no known term (none at a consistent version) left out.
  if (total < doc.length) [doc, tf, dl] = [doc.slice(0, total), tf.slice(0, total), dl.slice(0, total)];
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
  /** One copy of each tag's string, whichever memory read it. */
  const tagNames = new Map<string, string>();
  let tagCount = 0;
  const memories: Readonly<Memory>[] = new Array(memoryCount);
  const vectorStart = new Int32Array(memoryCount + 1);
  const parsed: (number[] | null)[] = new Array(memoryCount).fill(null);
  for (const [d, row] of memoryRows.entries()) {
    const { embedding, mentioned_us, size: _, ...m } = row;
    ids[d] = m.id;
    let code = typeNames.indexOf(m.type);
    if (code < 0) code = typeNames.push(m.type) - 1;
    type[d] = code;
    // One string for what repeats in every row.
    m.type = typeNames[code] as Memory['type'];
    m.bank_id = bankId;
    m.state = m.state === 'valid' ? 'valid' : 'invalidated';
    if (m.document_id !== null) {
      if (!documentIds.has(m.document_id)) documentIds.set(m.document_id, documentIds.size);
      document[d] = documentIds.get(m.document_id)!;
    }
    if (mentioned_us !== null) mentioned[d] = mentioned_us;
    if (m.tags.length === 0) m.tags = NO_TAGS as string[];
    else {
      m.tags = m.tags.map((t) => {
        if (!tagNames.has(t)) tagNames.set(t, t);
        return tagNames.get(t)!;
      });
      tagCount += m.tags.length;
    }
    memories[d] = deepFreeze(m);
    if (embedding !== null) parsed[d] = JSON.parse(embedding) as number[];
    vectorStart[d + 1] = vectorStart[d]! + (parsed[d]?.length ?? 0);
  }
  // One array for every vector: an array each took ~200 bytes more a memory.
  const vectors = new Float32Array(vectorStart[memoryCount]!);
  for (const [d, v] of parsed.entries()) if (v) vectors.set(v, vectorStart[d]!);
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
    memories,
    vectors,
    vectorStart,
    bytes: estimate(total, memoryCount, termCount, tagCount) + documentIds.size * MEMORY_BYTES + rowBytes,
    searches: 0,
    loadMs: 0,
  };
}

/** What a memory's row takes in a copy, about: its strings (two bytes a character at most), its vector, its objects. */
const rowEstimate = (r: CopyRow) =>
  2 * r.size + (r.embedding === null ? 0 : r.embedding.length / 2) + 40 * r.entities.length + ROW_BYTES;

/** A memory's objects besides its strings and vector (the row, its dates, arrays and metadata): an estimate. */
const ROW_BYTES = 1200;

/** `value` and everything in it frozen: a copy's memories are shared by every Recall that reads them. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value) && !(value instanceof Date)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
