import type { Db } from '../db.js';

/** A memory's vector as stored (one of the two forms, or none) with the columns Recall filters on. */
export interface StoredVector {
  id: string;
  seq: number;
  type: string;
  document_id: string | null;
  /** `mentioned_at` in epoch milliseconds. */
  mentioned_ms: number | null;
  tags: string[];
  state: string;
  /** Plain vector as pgvector text. */
  embedding: string | null;
  embedding_sealed: string | null;
}

/** A bank's stored vectors, read out for searching an encrypted bank's vectors in memory. */
export interface VectorStore {
  /**
   * What an in-memory copy of the bank's vectors is checked against: `generation` (every write),
   * `version` (moved when vectors of existing memories change: re-embed) and the memory count
   * (deletions). Null for no such bank.
   */
  vectorState(
    projectId: string,
    bankId: string,
  ): Promise<{ generation: number; version: number; count: number } | null>;
  /**
   * Stored vectors of the given memories, or of every memory after `afterSeq` in seq order (the
   * first `limit` of them when given).
   */
  memoryVectors(
    projectId: string,
    bankId: string,
    sel: { ids?: string[]; afterSeq?: number; limit?: number },
  ): Promise<StoredVector[]>;
  /** Ids of every memory of the bank. */
  memoryIds(projectId: string, bankId: string): Promise<string[]>;
  /**
   * The memories (of `ids`, or all when null) that pass `consolidationCandidates`' conditions,
   * without the vector: for searching an encrypted bank's vectors in memory.
   */
  consolidationEligible(
    projectId: string,
    bankId: string,
    ids: string[] | null,
    opts: { observations: boolean; tags: string[]; beforeSeq: number },
  ): Promise<string[]>;
}

const VECTOR_COLUMNS = `m.id::text AS id, m.seq::float8 AS seq, m.type, m.document_id,
  (extract(epoch FROM m.mentioned_at) * 1000)::float8 AS mentioned_ms, m.tags, m.state,
  m.embedding::text AS embedding, m.embedding_sealed`;

/**
 * A bank's vectors as stored (plain or sealed) with the columns Recall filters on: what an
 * in-memory search over an encrypted bank needs, read without the memories' text.
 */
export function vectorQueries(db: Db): VectorStore {
  return {
    async vectorState(projectId, bankId) {
      const rows = await db.query<{ generation: number; version: number; count: number }>(
        `SELECT generation::float8 AS generation, vectors_version::float8 AS version, memory_count AS count
         FROM banks WHERE project_id = $1 AND id = $2`,
        [projectId, bankId],
      );
      return rows[0] ?? null;
    },

    memoryVectors(projectId, bankId, sel) {
      if (sel.ids) {
        if (sel.ids.length === 0) return Promise.resolve([]);
        return db.query(
          `SELECT ${VECTOR_COLUMNS} FROM memories m
           WHERE m.project_id = $1 AND m.bank_id = $2 AND m.id = ANY($3::uuid[])`,
          [projectId, bankId, sel.ids],
        );
      }
      const params: unknown[] = [projectId, bankId, sel.afterSeq ?? 0];
      if (sel.limit !== undefined) params.push(sel.limit);
      return db.query(
        `SELECT ${VECTOR_COLUMNS} FROM memories m
         WHERE m.project_id = $1 AND m.bank_id = $2 AND m.seq > $3 ORDER BY m.seq${sel.limit !== undefined ? ' LIMIT $4' : ''}`,
        params,
      );
    },

    async memoryIds(projectId, bankId) {
      const rows = await db.query<{ id: string }>(
        'SELECT id::text AS id FROM memories WHERE project_id = $1 AND bank_id = $2',
        [projectId, bankId],
      );
      return rows.map((r) => r.id);
    },

    async consolidationEligible(projectId, bankId, ids, opts) {
      // The conditions of `consolidationCandidates`, without the vector: exactly the same tag
      // set; observations from their registry, or earlier memories supporting none yet.
      const params: unknown[] = [projectId, bankId, opts.tags];
      let sql: string;
      if (opts.observations) {
        sql = `SELECT m.id::text AS id FROM observations o
          JOIN memories m ON m.project_id = o.project_id AND m.bank_id = o.bank_id AND m.id = o.id
          WHERE o.project_id = $1 AND o.bank_id = $2 AND m.tags @> $3::text[] AND m.tags <@ $3::text[]`;
      } else {
        params.push(opts.beforeSeq);
        sql = `SELECT m.id::text AS id FROM memories m
          WHERE m.project_id = $1 AND m.bank_id = $2 AND m.tags @> $3::text[] AND m.tags <@ $3::text[]
            AND m.seq < $4 AND m.state = 'valid'
            AND NOT EXISTS (SELECT 1 FROM observations o WHERE o.project_id = $1 AND o.bank_id = $2 AND o.id = m.id)
            AND NOT EXISTS (SELECT 1 FROM observation_sources s WHERE s.project_id = $1 AND s.bank_id = $2
              AND s.memory_id = m.id AND s.relation = 'supports')`;
      }
      if (ids) {
        params.push(ids);
        sql += ` AND m.id = ANY($${params.length}::uuid[])`;
      }
      const rows = await db.query<{ id: string }>(sql, params);
      return rows.map((r) => r.id);
    },
  };
}
