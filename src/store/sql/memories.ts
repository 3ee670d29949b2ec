import { FACT_TYPES } from '../../contract/vocabulary.js';
import type { Memory, MemoryFilter, NewMemory, Page } from '../records.js';
import type { Db, Queryable } from '../db.js';
import { breathe } from '../breathe.js';
import { BANK_VERSION } from '../keyword-index.js';
import type { KeywordMemory } from '../keyword-memory.js';
import { lockBank } from './bank-lock.js';
import { lockBankForWrite, termGroupsClause } from './encryption.js';
import { decodeCursor, encodeCursor, filterClauses, vectorLiteral } from './filters.js';
import { checkStoredQuotaIn, lockStoredQuotaIn } from './limits.js';
import { derivedObservations, redoConsolidation } from './derived.js';
import { MEMORY_FIELDS } from './memory-rows.js';
import { holdSliceIn, type OperationSlice } from './operations.js';
import { type OrderKey, type PayHops, skipRows, walkPage } from './offset-walk.js';

/** A bank's memories: written with their terms and entities, read, re-embedded, deleted. */
export interface MemoryStore {
  /**
   * Writes memories with their terms and entities in one transaction. With `replaceDocuments`,
   * those documents' previous memories are deleted in the same transaction. If the first
   * memory's id already exists the batch was written before (a repeated operation) and nothing
   * is done. Returns the number of memories written. With `storedQuotaDefault` (the server's
   * default `stored_memories`, null for none) the project's quota is checked in the same
   * transaction under the project's lock: a write that would pass it throws
   * `StoredQuotaExceeded` and writes nothing. A document's `source` (what it was retained from,
   * kept for reprocessing) is set when given, cleared when null, left as it is when absent.
   */
  insertMemories(
    projectId: string,
    bankId: string,
    memories: NewMemory[],
    opts?: {
      replaceDocuments?: string[];
      documents?: { id: string; contentHash: string; source?: string | null }[];
      storedQuotaDefault?: number | null;
      /**
       * With `replaceDocuments`: the observations derived from the replaced memories go too and
       * the other memories behind them are consolidated again, as when a document is forgotten.
       */
      dropDerived?: boolean;
      /**
       * Documents that must still exist (a reprocess): when one is gone (forgotten since the
       * write was prepared), nothing is written and 0 is returned, decided under the bank's lock.
       */
      requireDocuments?: string[];
      /**
       * The write is a slice of a queued operation: its progress and the memories written are
       * recorded on the operation in this transaction while its worker holds it, and nothing is
       * written (`OperationLost`) when it does not (`holdSliceIn`).
       */
      operation?: OperationSlice;
    },
  ): Promise<number>;
  listMemories(
    projectId: string,
    bankId: string,
    filter: MemoryFilter & { q?: string; qTerms?: string[][] },
    page: { limit: number; cursor?: string; offset?: number; pay?: PayHops },
  ): Promise<Page<Memory>>;
  getMemories(projectId: string, bankId: string, ids: string[]): Promise<Memory[]>;
  /**
   * Recall's candidates: the memories with their cosine similarity to `vector` (null for a memory
   * without an embedding of its size), read in one query. `endsSnapshot`: in a snapshot, the last
   * statement the caller sends in it (`Queryable.queryLast`).
   */
  getCandidates(
    projectId: string,
    bankId: string,
    ids: string[],
    vector: Float32Array,
    opts?: { endsSnapshot?: boolean },
  ): Promise<(Memory & { similarity: number | null })[]>;
  /**
   * Outside a snapshot: `getCandidates` of `ids` (each a valid memory of the bank at `version`)
   * at `version` (`BANK_VERSION`, as `lastSearchChannels` read it in an earlier snapshot), else
   * null. From the bank's copy in the process when it is of that version (no statement), else in
   * one statement while the bank is still at it (then the same data; the embedded engine in the
   * process reads them in parts, in a snapshot of their own).
   */
  getCandidatesAt(
    projectId: string,
    bankId: string,
    ids: string[],
    vector: Float32Array,
    version: string,
  ): Promise<(Memory & { similarity: number | null })[] | null>;
  /**
   * Replaces the vectors of existing memories (a re-embed); ids not in the bank are ignored. A row
   * with `embedding_sealed` stores that instead of a plain vector. With `encrypted`, the rows were
   * prepared for that form and are refused (conflict, reason `encryption_changed`) when the bank's
   * setting no longer wants it.
   */
  setEmbeddings(
    projectId: string,
    bankId: string,
    rows: { id: string; embedding: Float32Array | null; embedding_sealed?: string | null }[],
    opts?: { encrypted?: boolean },
  ): Promise<void>;
  deleteMemory(projectId: string, bankId: string, id: string): Promise<boolean>;
  /**
   * Deletes the bank's memories (of these fact types only, when given) in one transaction, and
   * the documents left without a memory; returns how many memories went.
   */
  clearMemories(projectId: string, bankId: string, types?: string[]): Promise<number>;
}

/** The fields and the bank's order (`seq`), which listings page by and `toMemory` drops. */
const MEMORY_COLUMNS = `${MEMORY_FIELDS}, m.seq`;

/**
 * The conditions (` AND …`) of a memory listing's filter over `memories m`, text included, their
 * parameters pushed to `params`: what `listMemories` lists and `countMemories` counts.
 */
export function listedClauses(filter: MemoryFilter & { q?: string; qTerms?: string[][] }, params: unknown[]) {
  let clauses = filterClauses(filter, params);
  if (filter.qTerms) clauses += termGroupsClause(filter.qTerms, params, 'm');
  else if (filter.q) {
    params.push(`%${filter.q.replace(/[\\%_]/g, '\\$&')}%`);
    clauses += ` AND m.text ILIKE $${params.length}`;
  }
  return clauses;
}

/**
 * A memory listing's filter split in two: the part an index serves as a range in the listing's
 * order (a document's memories, memories_bank_document; one type's, memories_bank_type_seq),
 * as conditions (` AND …`) whose parameters it pushes to `params`, and the rest (`kept`), to be
 * applied to the rows of that range.
 */
export function indexedPart(filter: MemoryFilter & { q?: string; qTerms?: string[][] }, params: unknown[]) {
  const { documentId, types, ...rest } = filter;
  const one = types?.length === 1 ? types[0] : undefined;
  let range = '';
  if (documentId !== undefined) {
    params.push(documentId);
    range += ` AND m.document_id = $${params.length}`;
  }
  if (one !== undefined) {
    params.push(one);
    range += ` AND m.type = $${params.length}`;
  }
  return { range, kept: { ...rest, types: one === undefined ? types : undefined } };
}

/** The listing's order, newest first (index memories_bank_seq). */
export const BY_SEQ: OrderKey[] = [{ expr: 'm.seq', type: 'bigint', desc: true }];

/** Columns of a memory record, over alias `m`, with its entity names. */
export const MEMORY_SELECT = `SELECT ${MEMORY_COLUMNS} FROM memories m`;

/**
 * Memories one statement reads by id. A memory's entity names cost an index lookup each (up to
 * a hundred or so a memory); on the embedded engine a statement holds the only thread, and 100
 * memories of 100 entities took 100 ms in one statement.
 */
const MEMORIES_PER_READ = 20;

/**
 * Reads memories by id a bounded part at a time (see MEMORIES_PER_READ), with a turn of the event
 * loop between parts (two back to back held it 35 ms of CPU); order is not kept.
 */
export async function readByIds<T>(ids: string[], read: (part: string[]) => Promise<T[]>): Promise<T[]> {
  if (ids.length <= MEMORIES_PER_READ) return ids.length ? read(ids) : [];
  const out: T[] = [];
  for (let i = 0; i < ids.length; i += MEMORIES_PER_READ) {
    if (i > 0) await breathe();
    out.push(...(await read(ids.slice(i, i + MEMORIES_PER_READ))));
  }
  return out;
}

/**
 * A Recall's candidates with their similarity to `vector`. PostgreSQL reads them in one statement
 * (a round trip costs more than reading them): one statement blocks nobody there, unlike on the
 * embedded engine in the main thread. On its own thread it holds the engine no longer than parts
 * would, and saves the round trips; as a snapshot's last statement (`last`) it also ends it there.
 * `version`: only while the bank is at that version (`BANK_VERSION`), none otherwise.
 */
function readCandidates(
  db: Queryable & { engine?: string; ownThread?: boolean },
  projectId: string,
  bankId: string,
  ids: string[],
  vector: Float32Array,
  last: boolean,
  version: string | null,
): Promise<(Memory & { similarity: number | null })[]> {
  type Row = Memory & { similarity: number | null };
  const literal = vectorLiteral(vector);
  const sql = `SELECT ${MEMORY_FIELDS},
       CASE WHEN vector_dims(m.embedding) = $5 THEN 1 - (m.embedding <=> $4::vector) END AS similarity
     FROM memories m WHERE m.project_id = $1 AND m.bank_id = $2 AND m.id = ANY($3::uuid[])
       AND m.state = 'valid'${
         version === null
           ? ''
           : ` AND EXISTS (SELECT 1 FROM banks b WHERE b.project_id = $1 AND b.id = $2 AND ${BANK_VERSION} = $6)`
       }`;
  const read = (part: string[]) => {
    const params = [projectId, bankId, part, literal, vector.length, ...(version === null ? [] : [version])];
    return last && db.queryLast ? db.queryLast<Row>(sql, params) : db.query<Row>(sql, params);
  };
  // Rows of MEMORY_FIELDS and the similarity: no copy per candidate to drop a column.
  return db.engine === 'postgres' || db.ownThread
    ? ids.length
      ? read(ids)
      : Promise.resolve([])
    : readByIds(ids, read);
}

type MemoryRow = Memory & { seq: number };

function toMemory<T extends MemoryRow>({ seq: _seq, ...m }: T): Omit<T, 'seq'> {
  return m;
}

/**
 * Deletes memories and keeps the bank's keyword statistics and entity counts consistent.
 * Runs inside the caller's transaction.
 */
export async function deleteMemoriesIn(
  tx: Queryable,
  projectId: string,
  bankId: string,
  where: { ids?: string[]; documentIds?: string[]; types?: string[] },
): Promise<number> {
  const params: unknown[] = [projectId, bankId];
  let cond: string;
  if (where.types) {
    params.push(where.types);
    cond = 'type = ANY($3::text[])';
  } else if (where.ids) {
    params.push(where.ids);
    cond = 'id = ANY($3::uuid[])';
  } else {
    params.push(where.documentIds ?? []);
    cond = 'document_id = ANY($3::text[])';
  }
  const gone = await tx.query<{ id: string; term_count: number }>(
    `SELECT id::text AS id, term_count FROM memories WHERE project_id = $1 AND bank_id = $2 AND ${cond} FOR UPDATE`,
    params,
  );
  if (gone.length === 0) return 0;
  const ids = gone.map((g) => g.id);
  const terms = gone.reduce((n, g) => n + g.term_count, 0);
  await tx.query(
    `UPDATE bank_terms b SET df = b.df - x.n
     FROM (SELECT term, count(*)::int AS n FROM memory_terms
           WHERE project_id = $1 AND bank_id = $2 AND memory_id = ANY($3::uuid[]) GROUP BY term) x
     WHERE b.project_id = $1 AND b.bank_id = $2 AND b.term = x.term`,
    [projectId, bankId, ids],
  );
  // An invalidated memory is no mention (curation took it out of the counts already).
  await tx.query(
    `UPDATE entities e SET mention_count = greatest(e.mention_count - x.n, 0)
     FROM (SELECT me.entity_id, count(*)::int AS n FROM memory_entities me
           JOIN memories m ON m.project_id = me.project_id AND m.bank_id = me.bank_id AND m.id = me.memory_id
           WHERE me.project_id = $1 AND me.bank_id = $2 AND me.memory_id = ANY($3::uuid[]) AND m.state = 'valid'
           GROUP BY me.entity_id) x
     WHERE e.project_id = $1 AND e.bank_id = $2 AND e.id = x.entity_id`,
    [projectId, bankId, ids],
  );
  // The documents that keep some of their memories count them (a fact type cleared, one memory deleted).
  await tx.query(
    `UPDATE documents d SET memory_count = d.memory_count - x.n
     FROM (SELECT document_id, count(*)::int AS n FROM memories
           WHERE project_id = $1 AND bank_id = $2 AND id = ANY($3::uuid[]) AND document_id IS NOT NULL
           GROUP BY document_id) x
     WHERE d.project_id = $1 AND d.bank_id = $2 AND d.id = x.document_id`,
    [projectId, bankId, ids],
  );
  await tx.query('DELETE FROM memories WHERE project_id = $1 AND bank_id = $2 AND id = ANY($3::uuid[])', [
    projectId,
    bankId,
    ids,
  ]);
  await tx.query(
    `UPDATE banks SET memory_count = memory_count - $3, term_total = term_total - $4, updated_at = now()
     WHERE project_id = $1 AND id = $2`,
    [projectId, bankId, ids.length, terms],
  );
  return ids.length;
}

/**
 * Writes memories with their terms and entities and keeps the bank's statistics exact. Runs
 * inside the caller's transaction, which holds the bank row lock.
 */
export async function insertMemoriesIn(
  tx: Queryable,
  projectId: string,
  bankId: string,
  memories: NewMemory[],
): Promise<void> {
  const rows = memories.map((m) => ({
    id: m.id,
    type: m.type,
    text: m.text,
    context: m.context,
    occurred_start: m.occurred_start?.toISOString() ?? null,
    occurred_end: m.occurred_end?.toISOString() ?? null,
    mentioned_at: m.mentioned_at?.toISOString() ?? null,
    tags: m.tags,
    metadata: m.metadata,
    document_id: m.document_id,
    chunk_id: m.chunk_id,
    content_hash: m.content_hash,
    term_count: termCountOf(m),
    // A sealed vector replaces the plain one: an encrypted bank's row holds no invertible vector.
    embedding: m.embedding_sealed || m.embedding.length === 0 ? null : vectorLiteral(m.embedding),
    embedding_sealed: m.embedding_sealed ?? null,
    encrypted: m.encrypted ?? false,
  }));
  for (const part of chunks(rows, MEMORIES_PER_STATEMENT)) {
    await tx.query(
      `INSERT INTO memories (project_id, bank_id, id, type, text, context, occurred_start, occurred_end,
       mentioned_at, tags, metadata, document_id, chunk_id, content_hash, term_count, embedding,
       embedding_sealed, encrypted)
     SELECT $1, $2, r.id, r.type, r.text, r.context, r.occurred_start, r.occurred_end, r.mentioned_at,
       r.tags, coalesce(r.metadata, '{}'), r.document_id, r.chunk_id, r.content_hash, r.term_count,
       r.embedding::vector, r.embedding_sealed, r.encrypted
     FROM jsonb_to_recordset($3::jsonb) AS r(id uuid, type text, text text, context text,
       occurred_start timestamptz, occurred_end timestamptz, mentioned_at timestamptz, tags text[],
       metadata jsonb, document_id text, chunk_id text, content_hash text, term_count int, embedding text,
       embedding_sealed text, encrypted boolean)`,
      [projectId, bankId, JSON.stringify(part)],
    );
    await breathe();
  }
  await indexMemoriesIn(tx, projectId, bankId, memories);
  const termTotal = rows.reduce((n, r) => n + r.term_count, 0);
  await tx.query(
    `UPDATE banks SET memory_count = memory_count + $3, term_total = term_total + $4, updated_at = now()
     WHERE project_id = $1 AND id = $2`,
    [projectId, bankId, memories.length, termTotal],
  );
}

/** A memory's term count as stored (`term_count`): its term weights summed, rounded. */
export const termCountOf = (m: Pick<NewMemory, 'terms'>) =>
  Math.round([...m.terms.values()].reduce((a, b) => a + b, 0));

/**
 * Writes the keyword postings (with the bank's document frequencies) and entity links of
 * memories whose rows exist. Runs inside the caller's transaction, which holds the bank row lock.
 */
export async function indexMemoriesIn(
  tx: Queryable,
  projectId: string,
  bankId: string,
  memories: NewMemory[],
): Promise<void> {
  const length = new Map(memories.map((m) => [m.id, termCountOf(m)]));
  const terms = memories.flatMap((m) =>
    [...m.terms].map(([t, f]) => ({ m: m.id, t, f, d: length.get(m.id) })),
  );
  for (const part of chunks(terms, TERMS_PER_STATEMENT)) {
    const json = JSON.stringify(part);
    await tx.query(
      `INSERT INTO memory_terms (project_id, bank_id, memory_id, term, tf, dl)
       SELECT $1, $2, r.m, r.t, r.f, r.d FROM jsonb_to_recordset($3::jsonb) AS r(m uuid, t text, f real, d real)`,
      [projectId, bankId, json],
    );
    await tx.query(
      `INSERT INTO bank_terms (project_id, bank_id, term, df)
       SELECT $1, $2, r.t, count(*) FROM jsonb_to_recordset($3::jsonb) AS r(m uuid, t text, f real)
       GROUP BY r.t ORDER BY r.t
       ON CONFLICT (project_id, bank_id, term) DO UPDATE SET df = bank_terms.df + excluded.df`,
      [projectId, bankId, json],
    );
    await breathe();
  }
  await linkEntities(tx, projectId, bankId, memories);
}

/**
 * Removes the keyword postings of memories whose rows stay, keeping the bank's document
 * frequencies exact; a term no memory holds any longer leaves the vocabulary (`bank_terms`), so
 * no word of a text taken back (an edit's old text, an invalidated memory's) is left behind.
 */
export async function dropPostingsIn(tx: Queryable, projectId: string, bankId: string, ids: string[]) {
  const p = [projectId, bankId, ids];
  const touched = await tx.query<{ term: string }>(
    `UPDATE bank_terms b SET df = b.df - x.n
     FROM (SELECT term, count(*)::int AS n FROM memory_terms
           WHERE project_id = $1 AND bank_id = $2 AND memory_id = ANY($3::uuid[]) GROUP BY term) x
     WHERE b.project_id = $1 AND b.bank_id = $2 AND b.term = x.term RETURNING b.term`,
    p,
  );
  await tx.query(
    'DELETE FROM memory_terms WHERE project_id = $1 AND bank_id = $2 AND memory_id = ANY($3::uuid[])',
    p,
  );
  if (touched.length)
    await tx.query(
      'DELETE FROM bank_terms WHERE project_id = $1 AND bank_id = $2 AND term = ANY($3::text[]) AND df <= 0',
      [projectId, bankId, touched.map((t) => t.term)],
    );
}

/**
 * Removes the keyword postings and entity links of memories whose rows stay (their text is
 * about to change), keeping the bank's document frequencies and entity counts exact.
 */
export async function unindexMemoriesIn(
  tx: Queryable,
  projectId: string,
  bankId: string,
  ids: string[],
): Promise<void> {
  const p = [projectId, bankId, ids];
  await dropPostingsIn(tx, projectId, bankId, ids);
  await tx.query(
    `UPDATE entities e SET mention_count = greatest(e.mention_count - x.n, 0)
     FROM (SELECT entity_id, count(*)::int AS n FROM memory_entities
           WHERE project_id = $1 AND bank_id = $2 AND memory_id = ANY($3::uuid[]) GROUP BY entity_id) x
     WHERE e.project_id = $1 AND e.bank_id = $2 AND e.id = x.entity_id`,
    p,
  );
  await tx.query(
    'DELETE FROM memory_entities WHERE project_id = $1 AND bank_id = $2 AND memory_id = ANY($3::uuid[])',
    p,
  );
}

/** The observations derived from the memories of `documentIds`, deleted (see `derivedObservations`). */
async function dropDerivedObservations(
  tx: Queryable,
  projectId: string,
  bankId: string,
  documentIds: string[],
): Promise<void> {
  const own = await tx.query<{ id: string }>(
    'SELECT id::text AS id FROM memories WHERE project_id = $1 AND bank_id = $2 AND document_id = ANY($3::text[])',
    [projectId, bankId, documentIds],
  );
  const { observations, redo } = await derivedObservations(
    tx,
    projectId,
    bankId,
    own.map((r) => r.id),
  );
  if (observations.length) await deleteMemoriesIn(tx, projectId, bankId, { ids: observations });
  await redoConsolidation(tx, projectId, bankId, redo);
}

/** Memories: writes, listing and deletion. */
export function memoryQueries(db: Db, keywords: KeywordMemory | null = null): MemoryStore {
  return {
    async insertMemories(projectId, bankId, memories, opts = {}) {
      return db.transaction(async (tx) => {
        // A project with a stored-memories quota: its writers take turns from here to commit.
        const quota =
          opts.storedQuotaDefault !== undefined && memories.length
            ? await lockStoredQuotaIn(tx, projectId, opts.storedQuotaDefault)
            : null;
        // Lock the bank row next: serialises writers of one bank so statistics stay exact (and
        // refuses rows prepared for the other side of an encryption switch).
        await lockBankForWrite(tx, projectId, bankId, memories);
        const slice = opts.operation && (await holdSliceIn(tx, projectId, bankId, opts.operation));
        const written = await writeIn(tx, quota);
        await slice?.record(written);
        return written;
      });

      async function writeIn(tx: Queryable, quota: number | null): Promise<number> {
        if (opts.requireDocuments?.length) {
          const [found] = await tx.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM documents WHERE project_id = $1 AND bank_id = $2 AND id = ANY($3::text[])',
            [projectId, bankId, opts.requireDocuments],
          );
          if ((found?.n ?? 0) < new Set(opts.requireDocuments).size) return 0;
        }
        if (memories[0]) {
          const seen = await tx.query(
            'SELECT 1 FROM memories WHERE project_id = $1 AND bank_id = $2 AND id = $3',
            [projectId, bankId, memories[0].id],
          );
          if (seen.length) return 0;
        }
        if (opts.replaceDocuments?.length) {
          if (opts.dropDerived) await dropDerivedObservations(tx, projectId, bankId, opts.replaceDocuments);
          await deleteMemoriesIn(tx, projectId, bankId, { documentIds: opts.replaceDocuments });
        }
        if (quota !== null) await checkStoredQuotaIn(tx, projectId, quota, memories.length);
        if (memories.length) await insertMemoriesIn(tx, projectId, bankId, memories);
        if (opts.documents?.length) {
          await tx.query(
            `INSERT INTO documents (project_id, bank_id, id, content_hash, memory_count, source)
             SELECT $1, $2, d.id, d.hash, (SELECT count(*)::int FROM memories m
               WHERE m.project_id = $1 AND m.bank_id = $2 AND m.document_id = d.id), d.source
             FROM jsonb_to_recordset($3::jsonb) AS d(id text, hash text, source text)
             ON CONFLICT (project_id, bank_id, id) DO UPDATE SET content_hash = excluded.content_hash,
               memory_count = excluded.memory_count, updated_at = now(),
               source = CASE WHEN $4::text[] @> ARRAY[excluded.id] THEN documents.source ELSE excluded.source END`,
            [
              projectId,
              bankId,
              JSON.stringify(
                opts.documents.map((d) => ({ id: d.id, hash: d.contentHash, source: d.source ?? null })),
              ),
              // Documents whose kept source this write leaves as it is (a slice in their middle).
              opts.documents.filter((d) => d.source === undefined).map((d) => d.id),
            ],
          );
        }
        return memories.length;
      }
    },

    async listMemories(projectId, bankId, filter, page) {
      const params: unknown[] = [projectId, bankId];
      const { range, kept } = indexedPart(filter, params);
      let where = `m.project_id = $1 AND m.bank_id = $2${range}`;
      const after = decodeCursor(page.cursor);
      if (after !== null) {
        params.push(after);
        where += ` AND m.seq < $${params.length}`;
      }
      const listing = { from: 'memories m', where, params, order: BY_SEQ };
      let rows: MemoryRow[];
      if (listedClauses(kept, []) === '') {
        where += await skipRows(db, listing, page.offset ?? 0, page.pay);
        params.push(page.limit + 1);
        rows = await db.query<MemoryRow>(
          `${MEMORY_SELECT} WHERE ${where} ORDER BY m.seq DESC LIMIT $${params.length}`,
          params,
        );
      } else {
        // Filtered: the page is found in bounded hops over the range, then read by its keys.
        const keys = await walkPage(
          db,
          listing,
          (p) => `true${listedClauses(kept, p)}`,
          page.offset ?? 0,
          page.limit + 1,
          page.pay,
        );
        rows = await db.query<MemoryRow>(
          `${MEMORY_SELECT} WHERE m.project_id = $1 AND m.bank_id = $2 AND m.seq = ANY($3::bigint[])
           ORDER BY m.seq DESC`,
          [projectId, bankId, keys.map((k) => k[0])],
        );
      }
      const more = rows.length > page.limit;
      const items = rows.slice(0, page.limit);
      return { items: items.map(toMemory), next_cursor: more ? encodeCursor(items.at(-1)!.seq) : null };
    },

    async setEmbeddings(projectId, bankId, rows, opts = {}) {
      if (rows.length === 0) return;
      await db.transaction(async (tx) => {
        // Vectors prepared sealed (or plain) for a bank whose setting changed since are refused.
        if (opts.encrypted === undefined) await lockBank(tx, projectId, bankId);
        else await lockBankForWrite(tx, projectId, bankId, [{ encrypted: opts.encrypted }]);
        await tx.query(
          `UPDATE memories m SET embedding = r.e::vector, embedding_sealed = r.s
           FROM unnest($3::uuid[], $4::text[], $5::text[]) AS r(id, e, s)
           WHERE m.project_id = $1 AND m.bank_id = $2 AND m.id = r.id`,
          [
            projectId,
            bankId,
            rows.map((r) => r.id),
            rows.map((r) => (r.embedding_sealed || !r.embedding ? null : vectorLiteral(r.embedding))),
            rows.map((r) => r.embedding_sealed ?? null),
          ],
        );
        // Vectors of existing memories changed: in-memory copies of the bank's vectors are stale.
        await tx.query(
          'UPDATE banks SET vectors_version = vectors_version + 1 WHERE project_id = $1 AND id = $2',
          [projectId, bankId],
        );
      });
    },

    async getMemories(projectId, bankId, ids) {
      const rows = await readByIds(ids, (part) =>
        db.query<MemoryRow>(
          `${MEMORY_SELECT} WHERE m.project_id = $1 AND m.bank_id = $2 AND m.id = ANY($3::uuid[])`,
          [projectId, bankId, part],
        ),
      );
      return rows.map(toMemory);
    },

    getCandidates: (projectId, bankId, ids, vector, opts) =>
      readCandidates(db, projectId, bankId, ids, vector, opts?.endsSnapshot ?? false, null),

    async getCandidatesAt(projectId, bankId, ids, vector, version) {
      // From the bank's copy in the process when it is of that version (the same data).
      const copied = keywords?.candidatesAt(projectId, bankId, ids, vector, version);
      if (copied) return copied;
      // Every candidate is a valid memory of the bank at that version (the channels found it
      // there): one missing means the bank moved on.
      const rows =
        db.engine === 'postgres' || db.ownThread
          ? await readCandidates(db, projectId, bankId, ids, vector, false, version)
          : await db.transaction(
              (tx) => readCandidates(tx, projectId, bankId, ids, vector, false, version),
              'snapshot',
            );
      return rows.length === ids.length ? rows : null;
    },

    async deleteMemory(projectId, bankId, id) {
      const n = await db.transaction(async (tx) => {
        await lockBank(tx, projectId, bankId);
        return deleteMemoriesIn(tx, projectId, bankId, { ids: [id] });
      });
      return n > 0;
    },
    async clearMemories(projectId, bankId, types) {
      return db.transaction(async (tx) => {
        await lockBank(tx, projectId, bankId);
        const n = await deleteMemoriesIn(tx, projectId, bankId, { types: types ?? [...FACT_TYPES] });
        await tx.query(
          `DELETE FROM documents d WHERE d.project_id = $1 AND d.bank_id = $2
             AND NOT EXISTS (SELECT 1 FROM memories m
                              WHERE m.project_id = $1 AND m.bank_id = $2 AND m.document_id = d.id)`,
          [projectId, bankId],
        );
        return n;
      });
    },
  };
}

/** Upserts entities by normalised name and links them to their memories. */
async function linkEntities(
  tx: Queryable,
  projectId: string,
  bankId: string,
  memories: Pick<NewMemory, 'id' | 'entities' | 'mentioned_at' | 'encrypted'>[],
): Promise<void> {
  const links = memories.flatMap((m) => {
    const seen = new Set<string>();
    return m.entities.flatMap((e) => {
      // An encrypted bank's entity arrives sealed, with its keyed-hash key precomputed.
      const name = e.key === undefined ? e.text.trim().replace(/\s+/g, ' ') : e.text;
      const key = e.key ?? name.toLowerCase();
      if (!key || seen.has(key)) return [];
      seen.add(key);
      const at = (m.mentioned_at ?? new Date()).toISOString();
      return [{ m: m.id, name, key, type: e.type, at, alias: e.alias ?? null, enc: m.encrypted ?? false }];
    });
  });
  if (links.length === 0) return;
  // Each statement takes a bounded number of rows (the embedded engine runs one statement at a
  // time for everyone, in this thread), and the memory-entity links use the ids the upsert
  // returns: joining the new rows to `entities` by key let the planner, with statistics from
  // before this transaction, scan the whole table per row (200 items x 100 entities: 170 s).
  const byKey = new Map<string, typeof links>();
  for (const l of links) {
    const list = byKey.get(l.key);
    if (list) list.push(l);
    else byKey.set(l.key, [l]);
  }
  const keys = [...byKey.keys()].sort();
  const idOf = new Map<string, string>();
  for (let i = 0; i < keys.length; i += ENTITIES_PER_STATEMENT) {
    const part = keys.slice(i, i + ENTITIES_PER_STATEMENT).flatMap((k) => byKey.get(k)!);
    const rows = await tx.query<{ id: string; name_key: string }>(
      `INSERT INTO entities (project_id, bank_id, id, name, name_key, type, mention_count, first_seen, last_seen, encrypted)
       SELECT $1, $2, gen_random_uuid(), min(r.name), r.key, min(r.type), count(*), min(r.at), max(r.at), bool_or(r.enc)
       FROM jsonb_to_recordset($3::jsonb) AS r(m uuid, name text, key text, type text, at timestamptz, enc boolean)
       GROUP BY r.key ORDER BY r.key
       ON CONFLICT (project_id, bank_id, name_key) DO UPDATE SET
         mention_count = entities.mention_count + excluded.mention_count,
         first_seen = least(entities.first_seen, excluded.first_seen),
         last_seen = greatest(entities.last_seen, excluded.last_seen)
       RETURNING id::text AS id, name_key`,
      [projectId, bankId, JSON.stringify(part)],
    );
    for (const r of rows) idOf.set(r.name_key, r.id);
    // After the first part too: the foreign-key checks of rows that triggers add for each new
    // entity (entity_keys) plan against these statistics as well.
    if (i === 0 && keys.length >= ANALYZE_AFTER) await tx.query('ANALYZE entities');
    await breathe();
  }
  // Thousands of new entities in one go: planners' statistics (and the plans of the foreign-key
  // checks below, cached per connection) still describe the table as it was, and may scan it
  // once per link: 1.3 ms a link at 4,000 entities on the embedded engine, 0.2 ms once analyzed.
  if (keys.length >= ANALYZE_AFTER) await tx.query('ANALYZE entities');
  // One alias per entity and statement, as an UPDATE ... FROM applies one matching row.
  const aliases = new Map<string, string>();
  for (const l of links) if (l.alias !== null && !aliases.has(l.key)) aliases.set(l.key, l.alias);
  const aliasRows = [...aliases].map(([key, alias]) => ({ id: idOf.get(key)!, alias }));
  for (let i = 0; i < aliasRows.length; i += ROWS_PER_STATEMENT) {
    const part = aliasRows.slice(i, i + ROWS_PER_STATEMENT);
    await tx.query(
      `UPDATE entities e SET aliases = array_append(e.aliases, x.alias)
       FROM unnest($3::uuid[], $4::text[]) AS x(id, alias)
       WHERE e.project_id = $1 AND e.bank_id = $2 AND e.id = x.id
         AND lower(x.alias) <> e.name_key AND NOT (x.alias = ANY(e.aliases))`,
      [projectId, bankId, part.map((r) => r.id), part.map((r) => r.alias)],
    );
  }
  for (let i = 0; i < links.length; i += LINKS_PER_STATEMENT) {
    const part = links.slice(i, i + LINKS_PER_STATEMENT);
    await tx.query(
      `INSERT INTO memory_entities (project_id, bank_id, memory_id, entity_id)
       SELECT $1, $2, x.m, x.e FROM unnest($3::uuid[], $4::uuid[]) AS x(m, e)
       ON CONFLICT DO NOTHING`,
      [projectId, bankId, part.map((l) => l.m), part.map((l) => idOf.get(l.key)!)],
    );
    await breathe();
  }
}

/**
 * Rows one write statement of a Retain takes: on the embedded engine a statement holds the
 * only thread, and a few hundred index insertions take a few tens of milliseconds. Each bound
 * holds whatever the input's size, so a statement's time is bounded (issue 18: ~50 ms at most
 * on a loaded machine; measured by `npm run bench -- isolation`).
 */
const ROWS_PER_STATEMENT = 100;

/** Memories one insert takes (each with its text, metadata and vector, and their indexes). */
export const MEMORIES_PER_STATEMENT = 50;

/** Term rows one insert takes (`memory_terms`, and the `bank_terms` counts they add to). */
export const TERMS_PER_STATEMENT = 500;

/**
 * Memory-entity links one insert takes: each checks both foreign keys. 100 a statement took up
 * to 50 ms of CPU on the loaded machine.
 */
export const LINKS_PER_STATEMENT = 50;

/**
 * New entities one upsert takes: each also writes its resolution keys, with their checks.
 * 50 a statement took 10 ms on average and up to 133 ms of CPU on the loaded machine.
 */
export const ENTITIES_PER_STATEMENT = 25;

/** `xs` in consecutive parts of at most `n`. */
function chunks<T>(xs: readonly T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
  return out;
}

/** New entities in one Retain past which their table's statistics are refreshed before linking. */
const ANALYZE_AFTER = 1000;
