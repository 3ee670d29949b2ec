import type { ApiKeyRecord, Project, ProjectLimits } from '../records.js';
import type { Scope } from '../../contract/vocabulary.js';
import type { Db } from '../db.js';

/** Projects (the tenants), their API keys, and server-wide settings kept in the database. */
export interface TenancyStore {
  /** A value kept in the settings table, created with `init()` on first use (e.g. the key pepper). */
  setting(key: string, init: () => string): Promise<string>;
  getProject(id: string): Promise<Project | null>;
  listProjects(): Promise<Project[]>;
  createProject(p: { id: string; name: string; limits?: ProjectLimits }): Promise<Project | null>;
  updateProjectLimits(id: string, limits: ProjectLimits): Promise<Project | null>;
  deleteProject(id: string): Promise<boolean>;
  createApiKey(k: {
    id: string;
    projectId: string;
    name: string;
    scopes: Scope[];
    banks?: string[] | null;
    secretHash: string;
    expiresAt: Date | null;
  }): Promise<ApiKeyRecord>;
  getApiKey(id: string): Promise<ApiKeyRecord | null>;
  listApiKeys(projectId: string): Promise<ApiKeyRecord[]>;
  revokeApiKey(projectId: string, id: string): Promise<boolean>;
}

const KEY_COLUMNS = 'id, project_id, name, scopes, banks, secret_hash, created_at, expires_at, revoked_at';

/** Projects, API keys and server settings. */
export function tenancyQueries(db: Db): TenancyStore {
  return {
    async setting(key, init) {
      const found = await db.query<{ value: string }>('SELECT value FROM settings WHERE key = $1', [key]);
      if (found[0]) return found[0].value;
      await db.query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [
        key,
        init(),
      ]);
      const rows = await db.query<{ value: string }>('SELECT value FROM settings WHERE key = $1', [key]);
      return rows[0]!.value;
    },
    async getProject(id) {
      const rows = await db.query<Project>(
        'SELECT id, name, limits, created_at FROM projects WHERE id = $1',
        [id],
      );
      return rows[0] ?? null;
    },
    listProjects: () =>
      db.query<Project>('SELECT id, name, limits, created_at FROM projects ORDER BY created_at, id'),
    async createProject(p) {
      const rows = await db.query<Project>(
        `INSERT INTO projects (id, name, limits) VALUES ($1, $2, $3::jsonb)
         ON CONFLICT (id) DO NOTHING RETURNING id, name, limits, created_at`,
        [p.id, p.name, JSON.stringify(p.limits ?? {})],
      );
      return rows[0] ?? null;
    },
    async updateProjectLimits(id, limits) {
      const rows = await db.query<Project>(
        `UPDATE projects SET limits = limits || $2::jsonb WHERE id = $1 RETURNING id, name, limits, created_at`,
        [id, JSON.stringify(limits)],
      );
      return rows[0] ?? null;
    },
    async deleteProject(id) {
      return db.transaction(async (tx) => {
        // Bank data hangs off banks; removing banks first keeps each cascade small and ordered.
        await tx.query('DELETE FROM banks WHERE project_id = $1', [id]);
        // Then every other row of the tenant — audit, Idempotency-Key answers, rate-limit counters,
        // and whatever table a later migration keys by project — so that a project created again
        // under the same id sees nothing of the old one.
        const tables = await tx.query<{ name: string }>(
          `SELECT quote_ident(c.table_name) AS name FROM information_schema.columns c
           JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
           WHERE c.table_schema = current_schema() AND c.column_name = 'project_id'
             AND t.table_type = 'BASE TABLE' AND c.table_name NOT IN ('projects', 'banks')
           ORDER BY c.table_name`,
        );
        for (const t of tables) await tx.query(`DELETE FROM ${t.name} WHERE project_id = $1`, [id]);
        const rows = await tx.query('DELETE FROM projects WHERE id = $1 RETURNING id', [id]);
        return rows.length > 0;
      });
    },
    async createApiKey(k) {
      const rows = await db.query<ApiKeyRecord>(
        `INSERT INTO api_keys (id, project_id, name, scopes, banks, secret_hash, expires_at)
         VALUES ($1, $2, $3, $4::text[], $5::text[], $6, $7) RETURNING ${KEY_COLUMNS}`,
        [k.id, k.projectId, k.name, k.scopes, k.banks ?? null, k.secretHash, k.expiresAt],
      );
      return rows[0]!;
    },
    async getApiKey(id) {
      const rows = await db.query<ApiKeyRecord>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [id]);
      return rows[0] ?? null;
    },
    listApiKeys: (projectId) =>
      db.query<ApiKeyRecord>(
        `SELECT ${KEY_COLUMNS} FROM api_keys WHERE project_id = $1 ORDER BY created_at, id`,
        [projectId],
      ),
    async revokeApiKey(projectId, id) {
      const rows = await db.query(
        `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())
         WHERE project_id = $1 AND id = $2 RETURNING id`,
        [projectId, id],
      );
      return rows.length > 0;
    },
  };
}
