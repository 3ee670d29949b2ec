import type { Db } from '../db.js';
import type { NewMentalModel } from './mental-models.js';

/** A new directive as a template writes it. */
export interface TemplateDirective {
  id: string;
  name: string;
  text: string;
  priority: number;
  tags: string[];
  active: boolean;
}

/** What importing a bank template changes, worked out by core against the bank as it was read. */
export interface TemplateChange {
  /** Config keys to set (null: back to the default). */
  config: Record<string, unknown>;
  /** The bank's mission, when the template sets it. */
  mission?: string | null;
  createDirectives: TemplateDirective[];
  /** Existing directives (by id) and the fields the template gives them. */
  updateDirectives: {
    id: string;
    name: string;
    text: string;
    priority: number;
    tags: string[];
    active: boolean;
  }[];
  /** New mental models, asked for their first refresh. */
  createMentalModels: NewMentalModel[];
  /** Existing mental models (by id) with their new definition, asked for a refresh. */
  updateMentalModels: NewMentalModel[];
}

/** Bank templates: a bank's configuration, mission and directives applied together. */
export interface TemplateStore {
  /**
   * Applies `change` in one transaction under the bank's row lock: all of it or none. 'gone'
   * when the bank or a directive or mental model to update no longer exists, 'full' when the
   * bank would hold more than `maxDirectives` directives or `maxMentalModels` mental models, or
   * a model to create exists already (nothing is changed then).
   */
  applyBankTemplate(
    projectId: string,
    bankId: string,
    change: TemplateChange,
    maxDirectives: number,
    maxMentalModels: number,
  ): Promise<'applied' | 'gone' | 'full'>;
}

/** Rolls the transaction back with the reason. */
class Abort extends Error {
  constructor(readonly reason: 'gone' | 'full') {
    super(reason);
  }
}

export function templateQueries(db: Db): TemplateStore {
  return {
    async applyBankTemplate(projectId, bankId, change, maxDirectives, maxMentalModels) {
      try {
        return await db.transaction(async (tx) => {
          const locked = await tx.query('SELECT 1 FROM banks WHERE project_id = $1 AND id = $2 FOR UPDATE', [
            projectId,
            bankId,
          ]);
          if (!locked[0]) throw new Abort('gone');
          const set: Record<string, unknown> = Object.create(null);
          const unset: string[] = [];
          for (const [k, v] of Object.entries(change.config)) {
            if (v === null) unset.push(k);
            else set[k] = v;
          }
          const mission = change.mission !== undefined;
          // The generation moves: Recall answers kept for the bank's old settings are not served again.
          await tx.query(
            `UPDATE banks SET config = (config - $3::text[]) || $4::jsonb,
               mission = CASE WHEN $5 THEN $6 ELSE mission END,
               updated_at = now(), generation = generation + 1
             WHERE project_id = $1 AND id = $2`,
            [projectId, bankId, unset, JSON.stringify(set), mission, change.mission ?? null],
          );
          for (const d of change.updateDirectives) {
            const rows = await tx.query(
              `UPDATE directives SET name = $4, text = $5, priority = $6, tags = $7::text[], active = $8,
                 updated_at = now()
               WHERE project_id = $1 AND bank_id = $2 AND id = $3 RETURNING 1`,
              [projectId, bankId, d.id, d.name, d.text, d.priority, d.tags, d.active],
            );
            if (!rows[0]) throw new Abort('gone');
          }
          if (change.createDirectives.length) {
            const n = await tx.query<{ n: number }>(
              'SELECT count(*)::int AS n FROM directives WHERE project_id = $1 AND bank_id = $2',
              [projectId, bankId],
            );
            if (n[0]!.n + change.createDirectives.length > maxDirectives) throw new Abort('full');
            await tx.query(
              `INSERT INTO directives (project_id, bank_id, id, name, text, priority, tags, active)
               SELECT $1, $2, d.id::uuid, d.name, d.text, d.priority, ARRAY(SELECT jsonb_array_elements_text(d.tags)), d.active
                 FROM jsonb_to_recordset($3::jsonb) AS d(id text, name text, text text, priority int, tags jsonb, active boolean)`,
              [projectId, bankId, JSON.stringify(change.createDirectives)],
            );
          }
          for (const m of change.updateMentalModels) {
            // The definition changed: its content answers another question, so it is refreshed.
            const rows = await tx.query(
              `UPDATE mental_models SET name = $4, source_query = $5, tags = $6::text[], max_tokens = $7,
                 trigger = $8::jsonb, refreshed_generation = NULL, updated_at = now(),
                 refresh_requested_at = coalesce(refresh_requested_at, date_trunc('milliseconds', now()))
               WHERE project_id = $1 AND bank_id = $2 AND id = $3 RETURNING 1`,
              [
                projectId,
                bankId,
                m.id,
                m.name,
                m.source_query,
                m.tags,
                m.max_tokens,
                JSON.stringify(m.trigger),
              ],
            );
            if (!rows[0]) throw new Abort('gone');
          }
          if (change.createMentalModels.length) {
            const [state] = await tx.query<{ n: number; taken: boolean }>(
              `SELECT count(*)::int AS n, coalesce(bool_or(id = ANY($3::text[])), false) AS taken
                 FROM mental_models WHERE project_id = $1 AND bank_id = $2`,
              [projectId, bankId, change.createMentalModels.map((m) => m.id)],
            );
            if (state!.taken || state!.n + change.createMentalModels.length > maxMentalModels)
              throw new Abort('full');
            await tx.query(
              `INSERT INTO mental_models (project_id, bank_id, id, name, source_query, tags, max_tokens, trigger,
                 refresh_requested_at)
               SELECT $1, $2, m.id, m.name, m.source_query, ARRAY(SELECT jsonb_array_elements_text(m.tags)),
                 m.max_tokens, m.trigger, date_trunc('milliseconds', now())
                 FROM jsonb_to_recordset($3::jsonb)
                   AS m(id text, name text, source_query text, tags jsonb, max_tokens int, trigger jsonb)`,
              [projectId, bankId, JSON.stringify(change.createMentalModels)],
            );
          }
          return 'applied' as const;
        });
      } catch (err) {
        if (err instanceof Abort) return err.reason;
        throw err;
      }
    },
  };
}
