import type { Db } from '../db.js';
import { fencedWrite } from '../fence.js';
import { SEALED } from '../sealed.js';
import { lockTarget } from './encryption.js';

/** A mental model as stored: its text fields in the stored form (sealed in an encrypted bank). */
export interface MentalModelRecord {
  id: string;
  bank_id: string;
  name: string;
  source_query: string;
  tags: string[];
  max_tokens: number;
  /** Refresh settings (Hindsight's `trigger`): no bank text in it. */
  trigger: Record<string, unknown>;
  content: string | null;
  /** The last refresh's Reflect answer as JSON text. */
  reflect_response: string | null;
  /** The bank's generation the content was computed at; null when never refreshed (or cleared). */
  refreshed_generation: number | null;
  /** The bank's generation now: differing from `refreshed_generation`, the model is stale. */
  bank_generation: number;
  last_refreshed_at: Date | null;
  /** Set while a refresh is asked for and not yet done. */
  refresh_requested_at: Date | null;
  /** Why the last refresh failed, until one succeeds. */
  refresh_error: string | null;
  created_at: Date;
  updated_at: Date;
}

/** What a new mental model is made of. */
export interface NewMentalModel {
  id: string;
  name: string;
  source_query: string;
  tags: string[];
  max_tokens: number;
  trigger: Record<string, unknown>;
}

export type MentalModelPatch = Partial<Omit<NewMentalModel, 'id'>>;

/** A change of a model's content: what it was before, what it became, and why. */
export interface MentalModelHistoryEntry {
  previous_content: string | null;
  content: string | null;
  cause: 'refresh' | 'clear';
  changed_at: Date;
}

/** New content for a model (a refresh), or none (a clear). */
export interface MentalModelContent {
  content: string | null;
  reflect_response: string | null;
  /** The bank generation the content answers (null: none, as after a clear). */
  generation: number | null;
  cause: 'refresh' | 'clear';
  /**
   * The `refresh_requested_at` the refresh started from: the request is marked done only if no
   * newer one came meanwhile (that one still gets its refresh).
   */
  requestedAt?: Date | null;
}

/** A page of a bank's mental models, in creation order, with the count of all that match. */
export interface MentalModelPage {
  items: MentalModelRecord[];
  total: number;
}

/** A bank's mental models: named queries whose Reflect answers are kept and refreshed. */
export interface MentalModelStore {
  /** Creation order; `tags` filter as in Hindsight (`any`: shares one, `all`: has all, `exact`: same set). */
  listMentalModels(
    projectId: string,
    bankId: string,
    page: { limit: number; offset: number; tags?: string[]; tagsMatch?: 'any' | 'all' | 'exact' },
  ): Promise<MentalModelPage>;
  getMentalModel(projectId: string, bankId: string, id: string): Promise<MentalModelRecord | null>;
  /**
   * Inserts a model unless its id is taken (`exists`) or the bank holds `max` already (`full`):
   * counted and inserted under the bank's row lock, so concurrent creations cannot pass the
   * limit together. Null when the bank is gone.
   */
  insertMentalModel(
    projectId: string,
    bankId: string,
    m: NewMentalModel,
    max: number,
  ): Promise<MentalModelRecord | 'exists' | 'full' | null>;
  updateMentalModel(
    projectId: string,
    bankId: string,
    id: string,
    patch: MentalModelPatch,
  ): Promise<MentalModelRecord | null>;
  deleteMentalModel(projectId: string, bankId: string, id: string): Promise<boolean>;
  /**
   * Replaces a model's content in one transaction with a history entry (the content before and
   * after); the model's oldest entries beyond `keep` go. Null when the model is gone.
   */
  saveMentalModelContent(
    projectId: string,
    bankId: string,
    id: string,
    c: MentalModelContent,
    keep: number,
  ): Promise<MentalModelRecord | null>;
  /** The model's content changes, newest first. */
  mentalModelHistory(
    projectId: string,
    bankId: string,
    id: string,
    limit: number,
  ): Promise<MentalModelHistoryEntry[]>;
  /**
   * Marks models as asked for a refresh: those named, or (`stale`) those with
   * `trigger.refresh_after_consolidation` whose content is older than the bank. Returns how many.
   */
  requestMentalModelRefresh(
    projectId: string,
    bankId: string,
    which: { ids: string[] } | { stale: true },
  ): Promise<number>;
  /**
   * The model asked for a refresh longest ago, or null. Request times are kept to the
   * millisecond, so the one read here compares equal when given back (a JS Date has no more).
   */
  nextMentalModelRefresh(projectId: string, bankId: string): Promise<MentalModelRecord | null>;
  /** A refresh that cannot succeed: its request is dropped (unless renewed meanwhile), the error kept. */
  failMentalModelRefresh(
    projectId: string,
    bankId: string,
    id: string,
    requestedAt: Date | null,
    error: string,
  ): Promise<void>;
  /**
   * One batch of the bank's models and history entries with a text value not in the form
   * `toEncrypted` asks for, rewritten by `convert` (which gets each value as stored) under the
   * bank lock while the bank's config still wants that form; returns how many rows (0: none left).
   */
  convertMentalModels(
    projectId: string,
    bankId: string,
    toEncrypted: boolean,
    limit: number,
    convert: (value: string) => string,
  ): Promise<number>;
}

/**
 * Rows of the bank whose text is not in the form `$3` (wants encryption) asks for, `$4` the
 * sealed prefix; conversion.ts counts them before it ends a conversion.
 */
export const MENTAL_MODEL_WRONG_FORM = `(SELECT count(*) FROM mental_models WHERE project_id = $1 AND bank_id = $2
    AND (starts_with(name, $4) <> $3 OR starts_with(source_query, $4) <> $3
      OR coalesce(starts_with(content, $4) <> $3, false) OR coalesce(starts_with(reflect_response, $4) <> $3, false)))
  + (SELECT count(*) FROM mental_model_history WHERE project_id = $1 AND bank_id = $2
    AND (coalesce(starts_with(previous_content, $4) <> $3, false) OR coalesce(starts_with(content, $4) <> $3, false)))`;

const COLUMNS = `m.id, m.bank_id, m.name, m.source_query, m.tags, m.max_tokens, m.trigger, m.content,
  m.reflect_response, m.refreshed_generation::float8 AS refreshed_generation,
  (SELECT b.generation FROM banks b WHERE b.project_id = m.project_id AND b.id = m.bank_id)::float8 AS bank_generation,
  m.last_refreshed_at, m.refresh_requested_at, m.refresh_error, m.created_at, m.updated_at`;

const TAG_FILTER = {
  any: 'm.tags && $3::text[]',
  all: 'm.tags @> $3::text[]',
  exact: 'm.tags @> $3::text[] AND m.tags <@ $3::text[]',
} as const;

/** Mental models: kept per bank, deleted with the bank (foreign key), their history with them. */
export function mentalModelQueries(db: Db): MentalModelStore {
  const one = async (projectId: string, bankId: string, id: string) =>
    (
      await db.query<MentalModelRecord>(
        `SELECT ${COLUMNS} FROM mental_models m WHERE m.project_id = $1 AND m.bank_id = $2 AND m.id = $3`,
        [projectId, bankId, id],
      )
    )[0] ?? null;

  return {
    async listMentalModels(projectId, bankId, page) {
      const tagged = page.tags !== undefined && page.tags.length > 0;
      const filter = tagged ? `AND ${TAG_FILTER[page.tagsMatch ?? 'any']}` : '';
      const params: unknown[] = tagged ? [projectId, bankId, page.tags] : [projectId, bankId];
      const n = params.length;
      const [items, count] = await Promise.all([
        db.query<MentalModelRecord>(
          `SELECT ${COLUMNS} FROM mental_models m WHERE m.project_id = $1 AND m.bank_id = $2 ${filter}
           ORDER BY m.seq LIMIT $${n + 1} OFFSET $${n + 2}`,
          [...params, page.limit, page.offset],
        ),
        db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM mental_models m WHERE m.project_id = $1 AND m.bank_id = $2 ${filter}`,
          params,
        ),
      ]);
      return { items, total: count[0]?.n ?? 0 };
    },

    getMentalModel: one,

    async insertMentalModel(projectId, bankId, m, max) {
      return db.transaction(async (tx) => {
        // The bank row orders concurrent inserts: the count is the one this insert adds to.
        const bank = await tx.query('SELECT 1 FROM banks WHERE project_id = $1 AND id = $2 FOR UPDATE', [
          projectId,
          bankId,
        ]);
        if (bank.length === 0) return null;
        const [state] = await tx.query<{ taken: boolean; n: number }>(
          `SELECT EXISTS (SELECT 1 FROM mental_models WHERE project_id = $1 AND bank_id = $2 AND id = $3) AS taken,
             (SELECT count(*)::int FROM mental_models WHERE project_id = $1 AND bank_id = $2) AS n`,
          [projectId, bankId, m.id],
        );
        if (state!.taken) return 'exists' as const;
        if (state!.n >= max) return 'full' as const;
        await tx.query(
          `INSERT INTO mental_models (project_id, bank_id, id, name, source_query, tags, max_tokens, trigger)
           VALUES ($1, $2, $3, $4, $5, $6::text[], $7, $8::jsonb)`,
          [projectId, bankId, m.id, m.name, m.source_query, m.tags, m.max_tokens, JSON.stringify(m.trigger)],
        );
        const rows = await tx.query<MentalModelRecord>(
          `SELECT ${COLUMNS} FROM mental_models m WHERE m.project_id = $1 AND m.bank_id = $2 AND m.id = $3`,
          [projectId, bankId, m.id],
        );
        return rows[0]!;
      });
    },

    async updateMentalModel(projectId, bankId, id, patch) {
      // Each column keeps its value when the patch leaves it out (a null parameter).
      const rows = await db.query<{ id: string }>(
        `UPDATE mental_models SET name = coalesce($4, name), source_query = coalesce($5, source_query),
           tags = coalesce($6::text[], tags), max_tokens = coalesce($7, max_tokens),
           trigger = coalesce($8::jsonb, trigger), updated_at = now(),
           -- Content answering another query, or other memories, is stale until refreshed.
           refreshed_generation = CASE WHEN $5::text IS NULL AND $6::text[] IS NULL
             THEN refreshed_generation END
         WHERE project_id = $1 AND bank_id = $2 AND id = $3 RETURNING id`,
        [
          projectId,
          bankId,
          id,
          patch.name ?? null,
          patch.source_query ?? null,
          patch.tags ?? null,
          patch.max_tokens ?? null,
          patch.trigger === undefined ? null : JSON.stringify(patch.trigger),
        ],
      );
      return rows.length ? one(projectId, bankId, id) : null;
    },

    async deleteMentalModel(projectId, bankId, id) {
      const rows = await db.query(
        'DELETE FROM mental_models WHERE project_id = $1 AND bank_id = $2 AND id = $3 RETURNING 1',
        [projectId, bankId, id],
      );
      return rows.length > 0;
    },

    async saveMentalModelContent(projectId, bankId, id, c, keep) {
      const saved = await db.transaction(async (tx) => {
        const before = await tx.query<{ content: string | null }>(
          'SELECT content FROM mental_models WHERE project_id = $1 AND bank_id = $2 AND id = $3 FOR UPDATE',
          [projectId, bankId, id],
        );
        if (before.length === 0) return false;
        const refreshed = c.cause === 'refresh';
        await tx.query(
          `UPDATE mental_models SET content = $4, reflect_response = $5, refreshed_generation = $6,
             last_refreshed_at = CASE WHEN $7 THEN now() ELSE NULL END,
             refresh_error = CASE WHEN $7 THEN NULL ELSE refresh_error END,
             refresh_requested_at = CASE WHEN $7 AND refresh_requested_at IS NOT DISTINCT FROM $8::timestamptz
               THEN NULL ELSE refresh_requested_at END,
             updated_at = now()
           WHERE project_id = $1 AND bank_id = $2 AND id = $3`,
          [
            projectId,
            bankId,
            id,
            c.content,
            c.reflect_response,
            c.generation,
            refreshed,
            c.requestedAt ?? null,
          ],
        );
        await tx.query(
          `INSERT INTO mental_model_history (project_id, bank_id, model_id, previous_content, content, cause)
           VALUES ($1, $2, $3, $4, $5, $6)`,
          [projectId, bankId, id, before[0]!.content, c.content, c.cause],
        );
        await tx.query(
          `DELETE FROM mental_model_history WHERE project_id = $1 AND bank_id = $2 AND model_id = $3 AND seq <= (
             SELECT seq FROM mental_model_history WHERE project_id = $1 AND bank_id = $2 AND model_id = $3
             ORDER BY seq DESC OFFSET $4 LIMIT 1)`,
          [projectId, bankId, id, keep],
        );
        return true;
      });
      return saved ? one(projectId, bankId, id) : null;
    },

    mentalModelHistory(projectId, bankId, id, limit) {
      return db.query<MentalModelHistoryEntry>(
        `SELECT previous_content, content, cause, changed_at FROM mental_model_history
         WHERE project_id = $1 AND bank_id = $2 AND model_id = $3 ORDER BY seq DESC LIMIT $4`,
        [projectId, bankId, id, limit],
      );
    },

    async requestMentalModelRefresh(projectId, bankId, which) {
      // Fenced when a job asks (a consolidation's end): one of a bank deleted and created again
      // marked the new bank's models.
      const rows = await fencedWrite(db, projectId, bankId, (q) =>
        'ids' in which
          ? q.query(
              `UPDATE mental_models SET refresh_requested_at = coalesce(refresh_requested_at, date_trunc('milliseconds', now()))
               WHERE project_id = $1 AND bank_id = $2 AND id = ANY($3::text[]) RETURNING 1`,
              [projectId, bankId, which.ids],
            )
          : q.query(
              `UPDATE mental_models m SET refresh_requested_at = coalesce(m.refresh_requested_at, date_trunc('milliseconds', now()))
               FROM banks b WHERE b.project_id = m.project_id AND b.id = m.bank_id
                 AND m.project_id = $1 AND m.bank_id = $2
                 AND m.trigger->>'refresh_after_consolidation' = 'true'
                 AND m.refreshed_generation IS DISTINCT FROM b.generation
               RETURNING 1`,
              [projectId, bankId],
            ),
      );
      return rows.length;
    },

    async nextMentalModelRefresh(projectId, bankId) {
      const rows = await db.query<MentalModelRecord>(
        `SELECT ${COLUMNS} FROM mental_models m WHERE m.project_id = $1 AND m.bank_id = $2
           AND m.refresh_requested_at IS NOT NULL
         ORDER BY m.refresh_requested_at, m.seq LIMIT 1`,
        [projectId, bankId],
      );
      return rows[0] ?? null;
    },

    async failMentalModelRefresh(projectId, bankId, id, requestedAt, error) {
      // Fenced when its refresh job records it: one of a bank deleted and created again put its
      // error on the new bank's model of the same id.
      await fencedWrite(db, projectId, bankId, (q) =>
        q.query(
          `UPDATE mental_models SET refresh_error = $4,
             refresh_requested_at = CASE WHEN refresh_requested_at IS NOT DISTINCT FROM $5::timestamptz
               THEN NULL ELSE refresh_requested_at END
           WHERE project_id = $1 AND bank_id = $2 AND id = $3`,
          [projectId, bankId, id, error, requestedAt],
        ),
      );
    },

    async convertMentalModels(projectId, bankId, toEncrypted, limit, convert) {
      return db.transaction(async (tx) => {
        if ((await lockTarget(tx, projectId, bankId)) !== toEncrypted) return 0;
        const wrong = (v: string | null) =>
          v !== null && v.startsWith(SEALED) !== toEncrypted ? convert(v) : v;
        const models = await tx.query<{
          id: string;
          name: string;
          source_query: string;
          content: string | null;
          reflect_response: string | null;
        }>(
          `SELECT id, name, source_query, content, reflect_response FROM mental_models
           WHERE project_id = $1 AND bank_id = $2
             AND (starts_with(name, $4) <> $3 OR starts_with(source_query, $4) <> $3
               OR coalesce(starts_with(content, $4) <> $3, false)
               OR coalesce(starts_with(reflect_response, $4) <> $3, false))
           ORDER BY seq LIMIT $5 FOR UPDATE`,
          [projectId, bankId, toEncrypted, SEALED, limit],
        );
        if (models.length) {
          await tx.query(
            `UPDATE mental_models m SET name = r.name, source_query = r.source_query, content = r.content,
               reflect_response = r.reflect_response
             FROM jsonb_to_recordset($3::jsonb)
               AS r(id text, name text, source_query text, content text, reflect_response text)
             WHERE m.project_id = $1 AND m.bank_id = $2 AND m.id = r.id`,
            [
              projectId,
              bankId,
              JSON.stringify(
                models.map((m) => ({
                  id: m.id,
                  name: wrong(m.name),
                  source_query: wrong(m.source_query),
                  content: wrong(m.content),
                  reflect_response: wrong(m.reflect_response),
                })),
              ),
            ],
          );
        }
        const entries = await tx.query<{
          seq: string;
          previous_content: string | null;
          content: string | null;
        }>(
          `SELECT seq::text AS seq, previous_content, content FROM mental_model_history
           WHERE project_id = $1 AND bank_id = $2
             AND (coalesce(starts_with(previous_content, $4) <> $3, false)
               OR coalesce(starts_with(content, $4) <> $3, false))
           ORDER BY seq LIMIT $5 FOR UPDATE`,
          [projectId, bankId, toEncrypted, SEALED, limit],
        );
        if (entries.length) {
          await tx.query(
            `UPDATE mental_model_history h SET previous_content = r.previous_content, content = r.content
             FROM jsonb_to_recordset($3::jsonb) AS r(seq bigint, previous_content text, content text)
             WHERE h.project_id = $1 AND h.bank_id = $2 AND h.seq = r.seq`,
            [
              projectId,
              bankId,
              JSON.stringify(
                entries.map((e) => ({
                  seq: e.seq,
                  previous_content: wrong(e.previous_content),
                  content: wrong(e.content),
                })),
              ),
            ],
          );
        }
        return models.length + entries.length;
      });
    },
  };
}
