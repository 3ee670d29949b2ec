import type { Directive } from '../records.js';
import type { Db } from '../db.js';

/** A bank's directives: its hard rules for Reflect. */
export interface DirectiveStore {
  /** A bank's directives, highest priority first. */
  listDirectives(projectId: string, bankId: string): Promise<Directive[]>;
  getDirective(projectId: string, bankId: string, id: string): Promise<Directive | null>;
  /**
   * Inserts a directive unless the bank holds `max` already (null then): counted and inserted
   * under the bank's row lock, so concurrent inserts cannot pass the limit together.
   */
  insertDirective(
    projectId: string,
    bankId: string,
    d: { id: string; name: string; text: string; priority: number; tags: string[]; active: boolean },
    max: number,
  ): Promise<Directive | null>;
  updateDirective(
    projectId: string,
    bankId: string,
    id: string,
    patch: { name?: string; text?: string; priority?: number; tags?: string[]; active?: boolean },
  ): Promise<Directive | null>;
  deleteDirective(projectId: string, bankId: string, id: string): Promise<boolean>;
}

const COLUMNS = 'id::text AS id, bank_id, name, text, priority, tags, active, created_at, updated_at';

/** Directives: a bank's hard rules for Reflect. */
export function directiveQueries(db: Db): DirectiveStore {
  return {
    listDirectives(projectId, bankId) {
      return db.query<Directive>(
        `SELECT ${COLUMNS} FROM directives WHERE project_id = $1 AND bank_id = $2
         ORDER BY priority DESC, created_at, id`,
        [projectId, bankId],
      );
    },

    async getDirective(projectId, bankId, id) {
      const rows = await db.query<Directive>(
        `SELECT ${COLUMNS} FROM directives WHERE project_id = $1 AND bank_id = $2 AND id = $3`,
        [projectId, bankId, id],
      );
      return rows[0] ?? null;
    },

    async insertDirective(projectId, bankId, d, max) {
      return db.transaction(async (tx) => {
        // The bank row orders concurrent inserts: the count is the one this insert adds to.
        await tx.query('SELECT 1 FROM banks WHERE project_id = $1 AND id = $2 FOR UPDATE', [
          projectId,
          bankId,
        ]);
        const rows = await tx.query<Directive>(
          `INSERT INTO directives (project_id, bank_id, id, name, text, priority, tags, active)
           SELECT $1, $2, $3, $4, $5, $6, $7::text[], $8
           WHERE (SELECT count(*) FROM directives WHERE project_id = $1 AND bank_id = $2) < $9
           RETURNING ${COLUMNS}`,
          [projectId, bankId, d.id, d.name, d.text, d.priority, d.tags, d.active, max],
        );
        return rows[0] ?? null;
      });
    },

    async updateDirective(projectId, bankId, id, patch) {
      // Each column keeps its value when the patch leaves it out (a null parameter).
      const rows = await db.query<Directive>(
        `UPDATE directives SET name = coalesce($4, name), text = coalesce($5, text),
           priority = coalesce($6, priority), tags = coalesce($7::text[], tags),
           active = coalesce($8, active), updated_at = now()
         WHERE project_id = $1 AND bank_id = $2 AND id = $3 RETURNING ${COLUMNS}`,
        [
          projectId,
          bankId,
          id,
          patch.name ?? null,
          patch.text ?? null,
          patch.priority ?? null,
          patch.tags ?? null,
          patch.active ?? null,
        ],
      );
      return rows[0] ?? null;
    },

    async deleteDirective(projectId, bankId, id) {
      const rows = await db.query(
        'DELETE FROM directives WHERE project_id = $1 AND bank_id = $2 AND id = $3 RETURNING 1',
        [projectId, bankId, id],
      );
      return rows.length > 0;
    },
  };
}
