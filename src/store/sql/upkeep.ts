import type { Db } from '../db.js';
import { lockBank } from './bank-lock.js';
import { deleteMemoriesIn } from './memories.js';

/** Upkeep of a bank's derived data and labels: observations, document tags, finding a memory's bank. */
export interface UpkeepStore {
  /**
   * Deletes the observations consolidation wrote (a client's own `observation` memories stay)
   * and moves consolidation's cursor back to the start, so its next run reads every memory
   * again; returns how many observations went.
   */
  clearObservations(projectId: string, bankId: string): Promise<number>;
  /** The distinct tag sets of consolidated observations (tags sorted) with how many each, most first. */
  observationScopes(projectId: string, bankId: string): Promise<{ tags: string[]; count: number }[]>;
  /** Sets the tags of every memory of a document; the number of memories, or null when there is no such document. */
  setDocumentTags(
    projectId: string,
    bankId: string,
    documentId: string,
    tags: string[],
  ): Promise<number | null>;
  /**
   * The bank of the project holding the memory with this id, and how many memories of its
   * document were retained before it; null when there is none.
   */
  memoryPlace(projectId: string, memoryId: string): Promise<{ bank_id: string; position: number } | null>;
}

export function upkeepQueries(db: Db): UpkeepStore {
  return {
    async clearObservations(projectId, bankId) {
      return db.transaction(async (tx) => {
        await lockBank(tx, projectId, bankId);
        const ids = await tx.query<{ id: string }>(
          'SELECT id::text AS id FROM observations WHERE project_id = $1 AND bank_id = $2',
          [projectId, bankId],
        );
        const n = await deleteMemoriesIn(tx, projectId, bankId, { ids: ids.map((r) => r.id) });
        await tx.query(
          'UPDATE consolidation_state SET last_seq = 0, updated_at = now() WHERE project_id = $1 AND bank_id = $2',
          [projectId, bankId],
        );
        return n;
      });
    },

    async observationScopes(projectId, bankId) {
      return db.query<{ tags: string[]; count: number }>(
        `SELECT s.tags, count(*)::int AS count FROM (
           SELECT coalesce((SELECT array_agg(t ORDER BY t COLLATE "C") FROM unnest(m.tags) AS t), '{}') AS tags
             FROM memories m JOIN observations o
               ON o.project_id = m.project_id AND o.bank_id = m.bank_id AND o.id = m.id
            WHERE m.project_id = $1 AND m.bank_id = $2) s
         GROUP BY s.tags ORDER BY count DESC, s.tags`,
        [projectId, bankId],
      );
    },

    async setDocumentTags(projectId, bankId, documentId, tags) {
      return db.transaction(async (tx) => {
        await lockBank(tx, projectId, bankId);
        const doc = await tx.query(
          'SELECT 1 FROM documents WHERE project_id = $1 AND bank_id = $2 AND id = $3 FOR UPDATE',
          [projectId, bankId, documentId],
        );
        if (doc.length === 0) return null;
        const rows = await tx.query(
          `UPDATE memories SET tags = $4::text[] WHERE project_id = $1 AND bank_id = $2 AND document_id = $3
           RETURNING 1`,
          [projectId, bankId, documentId, tags],
        );
        await tx.query(
          'UPDATE documents SET updated_at = now() WHERE project_id = $1 AND bank_id = $2 AND id = $3',
          [projectId, bankId, documentId],
        );
        return rows.length;
      });
    },

    async memoryPlace(projectId, memoryId) {
      const rows = await db.query<{ bank_id: string; position: number }>(
        `SELECT m.bank_id, (SELECT count(*)::int FROM memories p
                             WHERE p.project_id = m.project_id AND p.bank_id = m.bank_id
                               AND p.document_id = m.document_id AND p.seq < m.seq) AS position
           FROM memories m WHERE m.project_id = $1 AND m.id = $2 LIMIT 1`,
        [projectId, memoryId],
      );
      return rows[0] ?? null;
    },
  };
}
