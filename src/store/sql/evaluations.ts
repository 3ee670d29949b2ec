import type { Db } from '../db.js';
import type { Page } from '../records.js';
import { SEALED } from '../sealed.js';
import { decodeCursor, encodeCursor } from './filters.js';
import { lockBank } from './bank-lock.js';

/** Recall@k and MRR of one ranked list over an evaluation's cases. */
export interface EvaluationFigures {
  recall_at_k: number;
  mrr: number;
}

/** An evaluation run without its cases: what a listing (and a chart over time) needs. */
export interface EvaluationSummary {
  id: string;
  bank_id: string;
  created_at: Date;
  k: number;
  /** The Recall options every case ran with (`budget`, `max_tokens`). */
  options: Record<string, unknown>;
  case_count: number;
  recall_at_k: number;
  mrr: number;
  /** Each retrieval channel's own figures, by channel name. */
  channels: Record<string, EvaluationFigures>;
}

export interface StoredEvaluation extends EvaluationSummary {
  /** The cases with their outcomes as JSON text, in the stored form (sealed in an encrypted bank). */
  cases: string;
}

export type NewEvaluation = Omit<StoredEvaluation, 'bank_id' | 'created_at'>;

/** A bank's recall evaluation runs. */
export interface EvaluationStore {
  /**
   * Keeps a run; beyond `keep` runs in the bank the oldest go, in the same transaction. Null
   * when the bank is gone.
   */
  insertEvaluation(
    projectId: string,
    bankId: string,
    e: NewEvaluation,
    keep: number,
  ): Promise<StoredEvaluation | null>;
  getEvaluation(projectId: string, bankId: string, id: string): Promise<StoredEvaluation | null>;
  /** Newest first, paged by `cursor`. */
  listEvaluations(
    projectId: string,
    bankId: string,
    page: { limit: number; cursor?: string },
  ): Promise<Page<EvaluationSummary>>;
  deleteEvaluation(projectId: string, bankId: string, id: string): Promise<boolean>;
  /**
   * Takes the bank's one evaluation slot for `leaseMs` under `holder`: false while another
   * holder's lease has not run out. One statement, so concurrent callers on any number of
   * processes get it once.
   */
  takeEvaluationRun(projectId: string, bankId: string, holder: string, leaseMs: number): Promise<boolean>;
  /** Extends the holder's lease; false when it was lost (ran out and taken by another). */
  renewEvaluationRun(projectId: string, bankId: string, holder: string, leaseMs: number): Promise<boolean>;
  /** Gives the slot back (only the holder's). */
  endEvaluationRun(projectId: string, bankId: string, holder: string): Promise<void>;
  /**
   * One batch of the bank's runs whose cases are not in the form `toEncrypted` asks for,
   * rewritten by `convert` under the bank lock while the bank's config still wants that form;
   * returns how many (0: none left).
   */
  convertEvaluations(
    projectId: string,
    bankId: string,
    toEncrypted: boolean,
    limit: number,
    convert: (cases: string) => string,
  ): Promise<number>;
}

const SUMMARY = `id::text AS id, bank_id, created_at, k, options, case_count, recall_at_k, mrr, channels,
  seq::float8 AS seq`;

type Row<T> = T & { seq: number };
const strip = <T>({ seq: _s, ...rest }: Row<T>): T => rest as T;

/** Recall evaluation runs: kept per bank, listed newest first, deleted with the bank (foreign key). */
export function evaluationQueries(db: Db): EvaluationStore {
  return {
    async insertEvaluation(projectId, bankId, e, keep) {
      return db.transaction(async (tx) => {
        // The bank held until commit: one deleted meanwhile gets no run (null), not a key error.
        const bank = await tx.query('SELECT 1 FROM banks WHERE project_id = $1 AND id = $2 FOR SHARE', [
          projectId,
          bankId,
        ]);
        if (bank.length === 0) return null;
        const rows = await tx.query<Row<StoredEvaluation>>(
          `INSERT INTO evaluations (project_id, bank_id, id, k, options, case_count, recall_at_k, mrr, channels, cases)
           VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9::jsonb, $10)
           RETURNING ${SUMMARY}, cases`,
          [
            projectId,
            bankId,
            e.id,
            e.k,
            JSON.stringify(e.options),
            e.case_count,
            e.recall_at_k,
            e.mrr,
            JSON.stringify(e.channels),
            e.cases,
          ],
        );
        await tx.query(
          `DELETE FROM evaluations WHERE project_id = $1 AND bank_id = $2 AND seq <= (
             SELECT seq FROM evaluations WHERE project_id = $1 AND bank_id = $2
             ORDER BY seq DESC OFFSET $3 LIMIT 1)`,
          [projectId, bankId, keep],
        );
        return strip(rows[0]!);
      });
    },

    async takeEvaluationRun(projectId, bankId, holder, leaseMs) {
      const rows = await db.query(
        `INSERT INTO evaluation_runs (project_id, bank_id, holder, expires_at)
         VALUES ($1, $2, $3, now() + ($4::int * interval '1 millisecond'))
         ON CONFLICT (project_id, bank_id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
           WHERE evaluation_runs.expires_at < now()
         RETURNING 1`,
        [projectId, bankId, holder, leaseMs],
      );
      return rows.length > 0;
    },

    async renewEvaluationRun(projectId, bankId, holder, leaseMs) {
      const rows = await db.query(
        `UPDATE evaluation_runs SET expires_at = now() + ($4::int * interval '1 millisecond')
         WHERE project_id = $1 AND bank_id = $2 AND holder = $3 RETURNING 1`,
        [projectId, bankId, holder, leaseMs],
      );
      return rows.length > 0;
    },

    async endEvaluationRun(projectId, bankId, holder) {
      await db.query('DELETE FROM evaluation_runs WHERE project_id = $1 AND bank_id = $2 AND holder = $3', [
        projectId,
        bankId,
        holder,
      ]);
    },

    async getEvaluation(projectId, bankId, id) {
      const rows = await db.query<Row<StoredEvaluation>>(
        `SELECT ${SUMMARY}, cases FROM evaluations WHERE project_id = $1 AND bank_id = $2 AND id = $3`,
        [projectId, bankId, id],
      );
      return rows[0] ? strip(rows[0]) : null;
    },

    async listEvaluations(projectId, bankId, page) {
      const before = decodeCursor(page.cursor);
      const rows = await db.query<Row<EvaluationSummary>>(
        `SELECT ${SUMMARY} FROM evaluations WHERE project_id = $1 AND bank_id = $2
           AND ($3::bigint IS NULL OR seq < $3::bigint)
         ORDER BY seq DESC LIMIT $4`,
        [projectId, bankId, before, page.limit + 1],
      );
      const items = rows.slice(0, page.limit);
      const last = items.at(-1);
      return {
        items: items.map(strip),
        next_cursor: rows.length > page.limit && last ? encodeCursor(last.seq) : null,
      };
    },

    async deleteEvaluation(projectId, bankId, id) {
      const rows = await db.query(
        'DELETE FROM evaluations WHERE project_id = $1 AND bank_id = $2 AND id = $3 RETURNING 1',
        [projectId, bankId, id],
      );
      return rows.length > 0;
    },

    async convertEvaluations(projectId, bankId, toEncrypted, limit, convert) {
      return db.transaction(async (tx) => {
        const target = await lockBank(tx, projectId, bankId);
        if (target === null || (target === 'managed') !== toEncrypted) return 0;
        const rows = await tx.query<{ id: string; cases: string }>(
          `SELECT id::text AS id, cases FROM evaluations
           WHERE project_id = $1 AND bank_id = $2 AND starts_with(cases, $3) <> $4
           ORDER BY seq LIMIT $5 FOR UPDATE`,
          [projectId, bankId, SEALED, toEncrypted, limit],
        );
        if (rows.length === 0) return 0;
        await tx.query(
          `UPDATE evaluations e SET cases = r.cases FROM jsonb_to_recordset($3::jsonb) AS r(id uuid, cases text)
           WHERE e.project_id = $1 AND e.bank_id = $2 AND e.id = r.id`,
          [projectId, bankId, JSON.stringify(rows.map((r) => ({ id: r.id, cases: convert(r.cases) })))],
        );
        return rows.length;
      });
    },
  };
}
