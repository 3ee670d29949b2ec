import { isUuid } from '../../core/ids.js';
import type { Operation } from '../../core/types.js';
import type { Db } from '../db.js';
import type { Store } from '../store.js';
import { cursorText, encodeCursor } from './filters.js';

type OperationStore = Pick<
  Store,
  | 'insertOperation'
  | 'getOperation'
  | 'listOperations'
  | 'cancelOperation'
  | 'claimOperation'
  | 'renewOperation'
  | 'finishOperation'
  | 'retryOperation'
  | 'countPendingOperations'
  | 'claimIdempotencyKey'
  | 'saveIdempotentResponse'
  | 'releaseIdempotencyKey'
>;

const OP_COLUMNS = `id::text AS id, project_id, bank_id, kind, status, items_count, memories_created, error, attempts,
  created_at, updated_at, extract(epoch FROM created_at) * 1000000 AS seq`;

type OpRow = Operation & { project_id: string; seq: number };
const view = ({ project_id: _p, seq: _s, ...op }: OpRow): Operation => op;

/** Greater than every id: a time-only cursor (an earlier version's) means "strictly older". */
const LAST_ID = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

/**
 * An operations cursor: the last listed operation's creation time (microseconds) and id, so
 * operations created in the same instant are neither skipped nor repeated. Anything unreadable
 * starts from the beginning, as other cursors do.
 */
function decodeOperationCursor(cursor: string | undefined): { at: number; id: string } | null {
  const [time = '', id = LAST_ID] = cursorText(cursor).split('~');
  const at = Number(time);
  return time && Number.isSafeInteger(at) && at >= 0 && isUuid(id) ? { at, id } : null;
}

/** Durable operations (claimed with FOR UPDATE SKIP LOCKED) and idempotency keys. */
export function operationQueries(db: Db): OperationStore {
  return {
    async insertOperation(o) {
      if (o.onceAmong) {
        const among = o.onceAmong;
        return db.transaction(async (tx) => {
          // The bank row serialises the check and the insert: a count read outside it would let
          // concurrent callers each queue one.
          await tx.query('SELECT 1 FROM banks WHERE project_id = $1 AND id = $2 FOR UPDATE', [
            o.projectId,
            o.bankId,
          ]);
          const found = await tx.query<OpRow>(
            `SELECT ${OP_COLUMNS} FROM operations WHERE project_id = $1 AND bank_id = $2 AND kind = $3
               AND status = ANY($4::text[]) ORDER BY created_at LIMIT 1`,
            [o.projectId, o.bankId, o.kind, among],
          );
          if (found[0]) return { operation: view(found[0]), created: false };
          const rows = await tx.query<OpRow>(
            `INSERT INTO operations (project_id, bank_id, id, kind, payload, items_count)
             VALUES ($1, $2, $3, $4, $5::jsonb, $6) RETURNING ${OP_COLUMNS}`,
            [o.projectId, o.bankId, o.id, o.kind, JSON.stringify(o.payload), o.itemsCount],
          );
          return { operation: view(rows[0]!), created: true };
        });
      }
      const rows = await db.query<OpRow>(
        `INSERT INTO operations (project_id, bank_id, id, kind, payload, items_count)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6)
         ON CONFLICT (project_id, bank_id, id) DO NOTHING RETURNING ${OP_COLUMNS}`,
        [o.projectId, o.bankId, o.id, o.kind, JSON.stringify(o.payload), o.itemsCount],
      );
      if (rows[0]) return { operation: view(rows[0]), created: true };
      const existing = await db.query<OpRow>(
        `SELECT ${OP_COLUMNS} FROM operations WHERE project_id = $1 AND bank_id = $2 AND id = $3`,
        [o.projectId, o.bankId, o.id],
      );
      return { operation: view(existing[0]!), created: false };
    },
    async getOperation(projectId, bankId, id) {
      const rows = await db.query<OpRow>(
        `SELECT ${OP_COLUMNS} FROM operations WHERE project_id = $1 AND bank_id = $2 AND id = $3`,
        [projectId, bankId, id],
      );
      return rows[0] ? view(rows[0]) : null;
    },
    async listOperations(projectId, bankId, filter, page) {
      const params: unknown[] = [projectId, bankId];
      let where = 'project_id = $1 AND bank_id = $2';
      if (filter.status) {
        params.push(filter.status);
        where += ` AND status = $${params.length}`;
      }
      const after = decodeOperationCursor(page.cursor);
      if (after) {
        // After the last one listed, in the listing's order: older, or as old with a greater id
        // (operations created in the same instant share created_at).
        params.push(after.at, after.id);
        const [at, id] = [`$${params.length - 1}`, `$${params.length}`];
        where += ` AND (extract(epoch FROM created_at) * 1000000 < ${at}
          OR (extract(epoch FROM created_at) * 1000000 = ${at} AND id > ${id}::uuid))`;
      }
      params.push(page.limit + 1);
      const rows = await db.query<OpRow>(
        `SELECT ${OP_COLUMNS} FROM operations WHERE ${where} ORDER BY created_at DESC, id LIMIT $${params.length}`,
        params,
      );
      const more = rows.length > page.limit;
      const items = rows.slice(0, page.limit);
      const last = items.at(-1);
      return {
        items: items.map(view),
        next_cursor: more && last ? encodeCursor(`${Math.floor(last.seq)}~${last.id}`) : null,
      };
    },
    async cancelOperation(projectId, bankId, id) {
      const rows = await db.query<OpRow>(
        `UPDATE operations SET status = 'cancelled', updated_at = now()
         WHERE project_id = $1 AND bank_id = $2 AND id = $3 AND status = 'pending' RETURNING ${OP_COLUMNS}`,
        [projectId, bankId, id],
      );
      return rows[0] ? view(rows[0]) : null;
    },
    async claimOperation(workerId, leaseMs) {
      // Pending work whose time has come, or work whose worker's lease ran out (it died).
      // The candidate is a materialized CTE, picked once: as a subquery joined to the UPDATE the
      // planner may rescan it per row, and each rescan skips the row just claimed and claims
      // the next one too, which then sits in 'processing' with nobody running it.
      const rows = await db.query<OpRow & { payload: unknown }>(
        `WITH c AS MATERIALIZED (
           SELECT project_id, bank_id, id FROM operations
           WHERE (status = 'pending' AND run_after <= now())
              OR (status = 'processing' AND locked_until < now())
           ORDER BY run_after, created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
         UPDATE operations o SET status = 'processing', attempts = o.attempts + 1, locked_by = $1,
           locked_until = now() + ($2::int * interval '1 millisecond'), updated_at = now()
         FROM c
         WHERE o.project_id = c.project_id AND o.bank_id = c.bank_id AND o.id = c.id
         RETURNING o.id::text AS id, o.project_id, o.bank_id, o.kind, o.status, o.items_count, o.memories_created,
           o.error, o.attempts, o.created_at, o.updated_at, o.payload, 0 AS seq`,
        [workerId, leaseMs],
      );
      const r = rows[0];
      if (!r) return null;
      const { payload, ...op } = r;
      return { operation: view(op), projectId: r.project_id, payload };
    },
    async renewOperation(projectId, bankId, id, workerId, leaseMs) {
      const rows = await db.query(
        `UPDATE operations SET locked_until = now() + ($5::int * interval '1 millisecond')
         WHERE project_id = $1 AND bank_id = $2 AND id = $3 AND locked_by = $4 AND status = 'processing' RETURNING id`,
        [projectId, bankId, id, workerId, leaseMs],
      );
      return rows.length > 0;
    },
    async finishOperation(projectId, bankId, id, workerId, outcome) {
      await db.query(
        `UPDATE operations SET status = $5, memories_created = $6, error = $7, locked_by = NULL, locked_until = NULL,
           updated_at = now()
         WHERE project_id = $1 AND bank_id = $2 AND id = $3 AND locked_by = $4`,
        [
          projectId,
          bankId,
          id,
          workerId,
          outcome.status,
          outcome.memoriesCreated ?? 0,
          outcome.error ?? null,
        ],
      );
    },
    async retryOperation(projectId, bankId, id, workerId, delayMs, error) {
      await db.query(
        `UPDATE operations SET status = 'pending', error = $6, locked_by = NULL, locked_until = NULL,
           run_after = now() + ($5::int * interval '1 millisecond'), updated_at = now()
         WHERE project_id = $1 AND bank_id = $2 AND id = $3 AND locked_by = $4`,
        [projectId, bankId, id, workerId, delayMs, error],
      );
    },
    async countPendingOperations() {
      const rows = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM operations WHERE status IN ('pending', 'processing')`,
      );
      return rows[0]!.n;
    },
    async claimIdempotencyKey(projectId, key, requestHash, staleMs) {
      // Keys live a day; old ones are swept opportunistically by whoever claims a new one.
      await db.query(`DELETE FROM idempotency WHERE created_at < now() - interval '24 hours'`);
      const inserted = await db.query(
        `INSERT INTO idempotency (project_id, key, request_hash) VALUES ($1, $2, $3)
         ON CONFLICT (project_id, key) DO NOTHING RETURNING key`,
        [projectId, key, requestHash],
      );
      if (inserted.length) return { state: 'new' };
      // A claim left in progress longer than any request runs belongs to a process that died
      // mid-request (nothing of it was acknowledged): the retry takes it over.
      const taken = await db.query(
        `UPDATE idempotency SET created_at = now()
         WHERE project_id = $1 AND key = $2 AND request_hash = $3 AND status = 0
           AND created_at < now() - ($4::int * interval '1 millisecond') RETURNING key`,
        [projectId, key, requestHash, staleMs],
      );
      if (taken.length) return { state: 'new' };
      const rows = await db.query<{ request_hash: string; status: number; response: unknown }>(
        'SELECT request_hash, status, response FROM idempotency WHERE project_id = $1 AND key = $2',
        [projectId, key],
      );
      const r = rows[0];
      if (!r) return { state: 'new' };
      if (r.request_hash !== requestHash) return { state: 'mismatch' };
      if (r.status === 0) return { state: 'in_progress' };
      return { state: 'done', status: r.status, response: r.response };
    },
    async saveIdempotentResponse(projectId, key, status, response) {
      await db.query(
        'UPDATE idempotency SET status = $3, response = $4::jsonb WHERE project_id = $1 AND key = $2',
        [projectId, key, status, JSON.stringify(response)],
      );
    },
    async releaseIdempotencyKey(projectId, key) {
      await db.query('DELETE FROM idempotency WHERE project_id = $1 AND key = $2 AND status = 0', [
        projectId,
        key,
      ]);
    },
  };
}
