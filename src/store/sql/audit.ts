import type { AuditEntry, Page } from '../records.js';
import type { Db } from '../db.js';
import { type BankIdIn, bankInClause, decodeCursor, encodeCursor } from './filters.js';

export interface AuditInput {
  projectId: string;
  actorType: string;
  keyId: string | null;
  action: string;
  bankId: string | null;
  spaceId: string | null;
  status: number;
  requestId: string;
  /** Absent for HTTP; 'mcp' for an MCP tool call. */
  transport?: 'mcp';
}

/** The append-only audit trail. */
export interface AuditStore {
  appendAudit(entry: AuditInput): Promise<void>;
  /**
   * An unauthenticated refusal: the first `inFull` of a project's minute are ordinary entries,
   * the rest add to that minute's one aggregate entry (`count`). One statement, shared by
   * every process on the database.
   */
  appendRefusal(entry: AuditInput, inFull: number): Promise<void>;
  /** Newest first; `banks` (a bank-scoped key) keeps only entries of those banks, none project-wide. */
  listAudit(
    projectId: string,
    filter: { bankId?: string; banks?: BankIdIn; action?: string; since?: Date; until?: Date },
    page: { limit: number; cursor?: string },
  ): Promise<Page<AuditEntry>>;
}

/** The action of the aggregate entry of a minute's refusals beyond those kept in full. */
export const REFUSALS_ACTION = 'auth.refusals';

/** The columns of an audit row as `AuditRow` reads them. */
export const AUDIT_COLUMNS =
  'id::int8 AS id, at, actor_type, key_id, action, bank_id, space_id, status, request_id, count, transport';

export interface AuditRow {
  id: number;
  at: Date;
  actor_type: string;
  key_id: string | null;
  action: string;
  bank_id: string | null;
  space_id: string | null;
  status: number;
  request_id: string;
  count: number | null;
  transport: string | null;
}

/** An audit row as the API shows it. */
export const auditEntry = (r: AuditRow): AuditEntry => ({
  id: String(r.id),
  at: r.at,
  actor: { type: r.actor_type, key_id: r.key_id },
  action: r.action,
  bank_id: r.bank_id,
  space_id: r.space_id,
  status: r.status,
  request_id: r.request_id,
  count: r.count ?? 1,
});

/** Append-only audit trail, paged by an opaque cursor. */
export function auditQueries(db: Db): AuditStore {
  return {
    async appendAudit(e) {
      await db.query(
        `INSERT INTO audit (project_id, actor_type, key_id, action, bank_id, space_id, status, request_id, transport)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [
          e.projectId,
          e.actorType,
          e.keyId,
          e.action,
          e.bankId,
          e.spaceId,
          e.status,
          e.requestId,
          e.transport ?? null,
        ],
      );
    },
    async appendRefusal(e, inFull) {
      // Counts older than an hour are never read again: the first refusal of a minute sweeps them.
      await db.query(
        `WITH c AS (
           INSERT INTO audit_refusals (project_id, minute, refused) VALUES ($1, date_trunc('minute', now()), 1)
           ON CONFLICT (project_id, minute) DO UPDATE SET refused = audit_refusals.refused + 1
           RETURNING refused, minute),
         swept AS (
           DELETE FROM audit_refusals o USING c
           WHERE c.refused = 1 AND o.project_id = $1 AND o.minute < c.minute - interval '1 hour'),
         one AS (
           INSERT INTO audit (project_id, actor_type, key_id, action, bank_id, space_id, status, request_id)
           SELECT $1, $2, $3, $4, $5, $6, $7, $8 FROM c WHERE c.refused <= $9)
         -- The entry's time is the first aggregated refusal, not the minute's start: a listing hides entries
         -- older than their project, and the project may be younger than the minute.
         INSERT INTO audit (project_id, at, actor_type, key_id, action, bank_id, space_id, status, request_id, count)
         SELECT $1, now(), 'unknown', NULL, '${REFUSALS_ACTION}', NULL, NULL, $7,
                'refusals:' || to_char(c.minute AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI"Z"'), 1
         FROM c WHERE c.refused > $9
         ON CONFLICT (project_id, request_id) WHERE count IS NOT NULL
         DO UPDATE SET count = audit.count + 1`,
        [e.projectId, e.actorType, e.keyId, e.action, e.bankId, e.spaceId, e.status, e.requestId, inFull],
      );
    },
    async listAudit(projectId, filter, page) {
      const params: unknown[] = [projectId];
      // Nothing older than the project: a request of a deleted tenant that was still in flight
      // may append its entry after the deletion, and a project created again under the same id
      // must not see it. (`-`, the entries no project could be named for, has no row.)
      const conds = [
        'project_id = $1',
        `at >= coalesce((SELECT created_at FROM projects WHERE id = $1), '-infinity'::timestamptz)`,
      ];
      const add = (sql: string, v: unknown) => {
        params.push(v);
        conds.push(sql.replace('?', `$${params.length}`));
      };
      if (filter.bankId !== undefined) add('bank_id = ?', filter.bankId);
      if (filter.banks) conds.push(bankInClause('bank_id', filter.banks, params));
      if (filter.action !== undefined) add('action = ?', filter.action);
      if (filter.since) add('at >= ?', filter.since);
      if (filter.until) add('at < ?', filter.until);
      const after = decodeCursor(page.cursor);
      if (after !== null) add('id < ?', after);
      params.push(page.limit + 1);
      const rows = await db.query<AuditRow>(
        `SELECT ${AUDIT_COLUMNS} FROM audit
         WHERE ${conds.join(' AND ')} ORDER BY id DESC LIMIT $${params.length}`,
        params,
      );
      const more = rows.length > page.limit;
      const items: AuditEntry[] = rows.slice(0, page.limit).map(auditEntry);
      return { items, next_cursor: more ? encodeCursor(Number(rows[page.limit - 1]!.id)) : null };
    },
  };
}
