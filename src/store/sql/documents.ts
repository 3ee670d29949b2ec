import type { DocumentRecord, MemoryFilter } from '../records.js';
import type { Db } from '../db.js';
import { lockBank } from './bank-lock.js';
import { BY_SEQ, deleteMemoriesIn, indexedPart, listedClauses } from './memories.js';
import { countRows, type OrderKey, type PayHops, skipRows } from './offset-walk.js';

/** Documents (the groups of memories retained under one document id), and counting memories by filter. */
export interface DocumentStore {
  listDocuments(
    projectId: string,
    bankId: string,
    page: { limit: number; offset: number; pay?: PayHops },
  ): Promise<{ items: DocumentRecord[]; total: number }>;
  getDocument(projectId: string, bankId: string, id: string): Promise<DocumentRecord | null>;
  /**
   * What a document was retained from, as stored (sealed in an encrypted bank): `source` is null
   * when none was kept. Null when the document does not exist.
   */
  documentSource(projectId: string, bankId: string, id: string): Promise<{ source: string | null } | null>;
  /** Deletes a document and its memories; the number of memories deleted, or null if absent. */
  deleteDocument(projectId: string, bankId: string, id: string): Promise<number | null>;
  /**
   * Memories matching the filter: without one, or by state only, the bank's counters
   * (`banks.memory_count`, `valid_count`, kept in the writes' transactions); with one, counted in
   * bounded hops (`countRows`, paid through `pay`).
   */
  countMemories(
    projectId: string,
    bankId: string,
    filter: MemoryFilter & { q?: string; qTerms?: string[][] },
    pay?: PayHops,
  ): Promise<number>;
  /**
   * How many memories each of these documents holds (every type and state, as `countMemories`
   * with `documentId` counts), in one query; a document holding none is left out.
   */
  documentMemoryCounts(
    projectId: string,
    bankId: string,
    documentIds: string[],
  ): Promise<Map<string, number>>;
}

const DOC_SELECT = `SELECT d.id, d.bank_id, d.content_hash, d.created_at, d.updated_at,
  (SELECT count(*)::int FROM memories m WHERE m.project_id = d.project_id AND m.bank_id = d.bank_id
     AND m.document_id = d.id) AS memory_count
  FROM documents d`;

/** The listing's order, last updated first (index documents_bank_updated, migration 45). */
const BY_UPDATE: OrderKey[] = [
  { expr: 'd.updated_at', type: 'timestamptz', desc: true },
  { expr: 'd.id', type: 'text' },
];

/** Documents: the groups of memories retained under one document id. */
export function documentQueries(db: Db): DocumentStore {
  return {
    async listDocuments(projectId, bankId, page) {
      const params: unknown[] = [projectId, bankId];
      let inBank = 'd.project_id = $1 AND d.bank_id = $2';
      const listing = { from: 'documents d', where: inBank, params, order: BY_UPDATE };
      const total = await countRows(db, { ...listing, params: [projectId, bankId] }, null, page.pay);
      inBank += await skipRows(db, listing, page.offset, page.pay);
      params.push(page.limit);
      const rows = await db.query<DocumentRecord>(
        `${DOC_SELECT} WHERE ${inBank} ORDER BY d.updated_at DESC, d.id LIMIT $${params.length}`,
        params,
      );
      return { items: rows, total };
    },
    async getDocument(projectId, bankId, id) {
      const rows = await db.query<DocumentRecord>(
        `${DOC_SELECT} WHERE d.project_id = $1 AND d.bank_id = $2 AND d.id = $3`,
        [projectId, bankId, id],
      );
      return rows[0] ?? null;
    },
    async documentSource(projectId, bankId, id) {
      const rows = await db.query<{ source: string | null }>(
        'SELECT source FROM documents WHERE project_id = $1 AND bank_id = $2 AND id = $3',
        [projectId, bankId, id],
      );
      return rows[0] ?? null;
    },
    async deleteDocument(projectId, bankId, id) {
      return db.transaction(async (tx) => {
        await lockBank(tx, projectId, bankId);
        const gone = await tx.query(
          'DELETE FROM documents WHERE project_id = $1 AND bank_id = $2 AND id = $3 RETURNING id',
          [projectId, bankId, id],
        );
        if (gone.length === 0) return null;
        return deleteMemoriesIn(tx, projectId, bankId, { documentIds: [id] });
      });
    },
    async countMemories(projectId, bankId, filter, pay) {
      const { state, ...besides } = filter;
      if (listedClauses(besides, []) === '') {
        // By state only: the bank's counters, kept in the writes' transactions (migration 46).
        const rows = await db.query<{ n: number }>(
          `SELECT CASE $3::text WHEN 'valid' THEN valid_count
                    WHEN 'invalidated' THEN memory_count - valid_count ELSE memory_count END AS n
           FROM banks WHERE project_id = $1 AND id = $2`,
          [projectId, bankId, state ?? 'all'],
        );
        return rows[0]?.n ?? 0;
      }
      // A document's memories, or one type's, are a range of an index: the hops walk that range
      // only, the rest of the filter is counted.
      const params: unknown[] = [projectId, bankId];
      const { range, kept } = indexedPart(filter, params);
      const listing = {
        from: 'memories m',
        where: `m.project_id = $1 AND m.bank_id = $2${range}`,
        params,
        order: BY_SEQ,
      };
      return countRows(db, listing, (p) => `true${listedClauses(kept, p)}`, pay);
    },
    async documentMemoryCounts(projectId, bankId, documentIds) {
      if (documentIds.length === 0) return new Map();
      const rows = await db.query<{ id: string; n: number }>(
        `SELECT document_id AS id, count(*)::int AS n FROM memories
          WHERE project_id = $1 AND bank_id = $2 AND document_id = ANY($3::text[]) GROUP BY document_id`,
        [projectId, bankId, documentIds],
      );
      return new Map(rows.map((r) => [r.id, r.n]));
    },
  };
}
