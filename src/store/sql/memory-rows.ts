/**
 * The columns a `Memory` is read from, and the pages of a bank's memories its copy in the process
 * is loaded from (`keyword-index.ts`).
 */
import type { Queryable } from '../db.js';
import type { Memory } from '../records.js';

/**
 * Each link's entity name is read by its key, one index lookup per link (the foreign key
 * guarantees the row). A join let the planner, once the bank had statistics, hash the bank's
 * whole entities table for every memory read: 45 ms a memory at 20,000 entities on the
 * embedded engine, growing with the bank. A row of these columns is a `Memory` as it is.
 */
export const MEMORY_FIELDS = `m.id::text AS id, m.bank_id, m.type, m.text, m.context, m.occurred_start, m.occurred_end,
  m.mentioned_at, m.tags, m.metadata, m.document_id, m.chunk_id, m.created_at,
  m.state, m.invalidation_reason, m.edited_at,
  coalesce((SELECT array_agg(l.name ORDER BY l.name) FROM (
    SELECT (SELECT e.name FROM entities e
            WHERE e.project_id = me.project_id AND e.bank_id = me.bank_id AND e.id = me.entity_id) AS name
    FROM memory_entities me
    WHERE me.project_id = m.project_id AND me.bank_id = m.bank_id AND me.memory_id = m.id) l), '{}') AS entities`;

/** A memory as a bank's copy reads it: its fields, and what else the copy keeps of it. */
export interface CopyRow extends Memory {
  /** Its vector as pgvector writes it (`[x,y,…]`), null for none. */
  embedding: string | null;
  /** When it was mentioned, in epoch microseconds (the column's precision), null for none. */
  mentioned_us: number | null;
  /** Bytes of its text, context and metadata: what its strings take, about. */
  size: number;
}

/** The bank's memories after `after` (all from the first with null), in id order, at most `limit`. */
export function readCopyPage(
  q: Queryable,
  projectId: string,
  bankId: string,
  after: string | null,
  limit: number,
): Promise<CopyRow[]> {
  return q.query<CopyRow>(
    `SELECT ${MEMORY_FIELDS}, m.embedding::text AS embedding,
       (extract(epoch FROM m.mentioned_at) * 1000000)::float8 AS mentioned_us,
       octet_length(m.text) + coalesce(octet_length(m.context), 0) + octet_length(m.metadata::text) AS size
     FROM memories m WHERE m.project_id = $1 AND m.bank_id = $2${after === null ? '' : ' AND m.id > $4::uuid'}
     ORDER BY m.id LIMIT $3`,
    after === null ? [projectId, bankId, limit] : [projectId, bankId, limit, after],
  );
}
