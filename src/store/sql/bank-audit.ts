import type { AuditEntry } from '../records.js';
import type { Db } from '../db.js';
import { AUDIT_COLUMNS, type AuditRow, auditEntry } from './audit.js';
import { decodeCursor, encodeCursor } from './filters.js';
import { type OrderKey, type PayHops, skipRows } from './offset-walk.js';

/** How a request came: over HTTP, as an MCP tool call, or from the server itself (none in mnemo). */
export type AuditTransport = 'http' | 'mcp' | 'system';

/** Which of a bank's audit entries a listing or a count keeps. */
export interface BankAuditFilter {
  action?: string;
  transport?: AuditTransport;
  since?: Date;
  until?: Date;
}

export interface BankAuditPage {
  items: (AuditEntry & { transport: AuditTransport })[];
  /** Matching entries, counted up to `countCap` (then `capped`). */
  total: number;
  capped: boolean;
  next_cursor: string | null;
}

/** One bank's audit trail (Hindsight's per-bank audit log), read over the bank's indexes. */
export interface BankAuditStore {
  /**
   * The bank's entries, newest first: `offset` entries skipped, or those older than `cursor`.
   * `total` counts at most `countCap` matching entries, so no call reads more than
   * `countCap + offset + limit` index entries.
   */
  listBankAudit(
    projectId: string,
    bankId: string,
    filter: BankAuditFilter,
    page: { limit: number; offset: number; cursor?: string; countCap: number; pay?: PayHops },
  ): Promise<BankAuditPage>;
  /** Requests per action in the bank's entries of [from, to), in buckets of `stepSeconds`. */
  bankAuditBuckets(
    projectId: string,
    bankId: string,
    q: { action?: string; from: Date; to: Date; stepSeconds: number },
  ): Promise<{ bucket: Date; action: string; n: number }[]>;
}

/** The WHERE clause of a bank's entries, its parameters pushed onto `params`. */
function where(projectId: string, bankId: string, f: BankAuditFilter, params: unknown[]): string {
  params.push(projectId, bankId);
  // Nothing older than the project (see AuditStore.listAudit: a tenant created again under the
  // same id sees none of its predecessor's entries).
  const conds = [
    'project_id = $1',
    'bank_id = $2',
    `at >= coalesce((SELECT created_at FROM projects WHERE id = $1), '-infinity'::timestamptz)`,
  ];
  const add = (sql: string, v: unknown) => {
    params.push(v);
    conds.push(sql.replace('?', `$${params.length}`));
  };
  if (f.action !== undefined) add('action = ?', f.action);
  if (f.transport === 'http') conds.push('transport IS NULL');
  else if (f.transport === 'mcp') conds.push(`transport = 'mcp'`);
  else if (f.transport === 'system') conds.push('false');
  if (f.since) add('at >= ?', f.since);
  if (f.until) add('at < ?', f.until);
  return conds.join(' AND ');
}

/** The ledger's order, newest first (index audit_bank). */
const NEWEST: OrderKey[] = [{ expr: 'id', type: 'bigint', desc: true }];

export function bankAuditQueries(db: Db): BankAuditStore {
  return {
    async listBankAudit(projectId, bankId, filter, page) {
      const params: unknown[] = [];
      let cond = where(projectId, bankId, filter, params);
      const counted = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM (SELECT 1 FROM audit WHERE ${cond} LIMIT ${page.countCap + 1}) x`,
        params,
      );
      const n = counted[0]?.n ?? 0;
      const after = decodeCursor(page.cursor);
      if (after !== null) {
        params.push(after);
        cond += ` AND id < $${params.length}`;
      }
      const offset = after !== null ? 0 : page.offset;
      cond += await skipRows(db, { from: 'audit', where: cond, params, order: NEWEST }, offset, page.pay);
      params.push(page.limit + 1);
      const rows = await db.query<AuditRow>(
        `SELECT ${AUDIT_COLUMNS} FROM audit WHERE ${cond} ORDER BY id DESC LIMIT $${params.length}`,
        params,
      );
      const more = rows.length > page.limit;
      return {
        items: rows.slice(0, page.limit).map((r) => ({
          ...auditEntry(r),
          transport: r.transport === 'mcp' ? ('mcp' as const) : ('http' as const),
        })),
        total: Math.min(n, page.countCap),
        capped: n > page.countCap,
        next_cursor: more ? encodeCursor(Number(rows[page.limit - 1]!.id)) : null,
      };
    },

    async bankAuditBuckets(projectId, bankId, q) {
      const params: unknown[] = [];
      const cond = where(projectId, bankId, { action: q.action, since: q.from, until: q.to }, params);
      params.push(q.stepSeconds);
      const rows = await db.query<{ bucket: number; action: string; n: number }>(
        `SELECT floor(extract(epoch FROM at) / $${params.length})::float8 * $${params.length} AS bucket,
                action, sum(coalesce(count, 1))::int AS n
           FROM audit WHERE ${cond} GROUP BY 1, 2`,
        params,
      );
      return rows.map((r) => ({ bucket: new Date(Number(r.bucket) * 1000), action: r.action, n: r.n }));
    },
  };
}
