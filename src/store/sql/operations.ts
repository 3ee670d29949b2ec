import { isUuid } from '../uuid.js';
import type { IdempotencyClaim, IdempotencyScope, IdempotentReply, Operation, Page } from '../records.js';
import type { Db, Queryable } from '../db.js';
import { fencedWrite, OperationLost } from '../fence.js';
import { cursorText, encodeCursor } from './filters.js';
import { partsOf, readPayloadParts, storedPayload, writePayloadParts } from './payload-parts.js';
import { countRows, type OrderKey, type PayHops, rowsIn, skipRows, walkPage } from './offset-walk.js';
import { refundCounters, refundDayItems } from './limits.js';

/**
 * What a queued operation was charged when it was queued and still holds: retained items of the
 * day, and budget counters (each with the window it was charged in, as `refundCost` takes them).
 */
export interface OperationCharge {
  items?: { windowStart: Date; amount: number };
  counters: { kind: string; subject: string; windowStart: Date; amount: number }[];
}

/** The part of its charge a failed operation gives back: items, and an amount per counter kind (unit). */
export interface ChargeBack {
  items: number;
  units: Record<string, number>;
}

/**
 * One slice of a queued operation written by the worker holding its lease: the write records
 * `progress` (where the operation stands once the slice is stored) and the memories it wrote on
 * the operation in its own transaction, so the two can never disagree (see `holdSliceIn`).
 */
export interface OperationSlice {
  id: string;
  workerId: string;
  progress: unknown;
}

/** Operations: durable background work, queued per bank and claimed by workers. */
export interface OperationStore {
  /**
   * Inserts an operation; an existing id is returned as is (`created: false`). With `onceAmong`,
   * an operation of the same kind of the bank in one of those states is returned instead of
   * inserting another, decided under the bank's row lock (concurrent callers queue one).
   */
  insertOperation(o: {
    projectId: string;
    bankId: string;
    id: string;
    kind: string;
    payload: unknown;
    itemsCount: number;
    onceAmong?: ('pending' | 'processing')[];
    /** What the operation was charged as it was queued: it holds it until it ends. */
    charge?: OperationCharge;
  }): Promise<{ operation: Operation; created: boolean }>;
  getOperation(projectId: string, bankId: string, id: string): Promise<Operation | null>;
  /**
   * Whether an operation of the bank of the same kind, queued before this one (by creation time,
   * then id), is still pending or processing: a kind that must run one at a time per bank waits
   * for it. The order is total, so of two such operations claimed at once exactly one goes on.
   */
  earlierOperationUnfinished(projectId: string, bankId: string, id: string, kind: string): Promise<boolean>;
  /** Newest first; keyset-paged by `cursor`, or by `offset` when there is none. */
  listOperations(
    projectId: string,
    bankId: string,
    filter: OperationFilter,
    page: { limit: number; cursor?: string; offset?: number; pay?: PayHops },
  ): Promise<Page<Operation>>;
  /** How many operations `listOperations` lists with this filter, counted in bounded hops. */
  countListedOperations(
    projectId: string,
    bankId: string,
    filter: OperationFilter,
    pay?: PayHops,
  ): Promise<number>;
  /** The bank's operations matching the filter, by status. */
  countOperations(
    projectId: string,
    bankId: string,
    filter: OperationFilter,
  ): Promise<Record<string, number>>;
  /**
   * Cancels a pending operation, or with `running` a processing one too (between its slices, or
   * in one: the worker holding it then finds it lost at its next write, which stores nothing);
   * null when it is in no such state (or absent). With `undone`, what it holds of its charge and
   * did not do (from the progress its row records, read under its lock; all of it before its
   * first slice) is given back in the transaction that marks it cancelled: against a worker's
   * failure or another cancel, once.
   */
  cancelOperation(
    projectId: string,
    bankId: string,
    id: string,
    opts?: { running?: boolean; undone?: (progress: unknown) => ChargeBack | null },
  ): Promise<Operation | null>;
  /**
   * Queues a failed operation again, to run at once from the progress it had recorded, with its
   * error cleared and its attempts counted afresh; null when it is not failed (or absent). With
   * `charge`, that is what it holds from now on (what its retry was charged).
   */
  requeueOperation(
    projectId: string,
    bankId: string,
    id: string,
    charge?: OperationCharge,
  ): Promise<Operation | null>;
  /** Where an operation's last finished slice got to (null before its first, or when it is absent). */
  operationProgress(projectId: string, bankId: string, id: string): Promise<unknown>;
  /**
   * Deletes the record of a finished operation (completed, failed or cancelled); false when it
   * is pending or processing (or absent).
   */
  deleteFinishedOperation(projectId: string, bankId: string, id: string): Promise<boolean>;
  /**
   * Claims the next runnable operation (pending, or processing with an expired lease), fairly:
   * the project, then the bank, whose last claim is oldest goes first. `progress` is where a
   * sliced operation got to (null on its first run). With `payload: false` the payload is not
   * read (it is `undefined`): a worker that keeps it from the operation's first slice asks
   * `operationPayload` only when it has not.
   */
  claimOperation(workerId: string, leaseMs: number, opts?: { payload?: boolean }): Promise<Claimed | null>;
  /**
   * The payload an operation was queued with (it never changes), and the length of its JSON text
   * (what keeping it costs); null when the operation is gone.
   */
  operationPayload(
    projectId: string,
    bankId: string,
    id: string,
  ): Promise<{ payload: unknown; bytes: number } | null>;
  /**
   * Ends one slice of a claimed operation: records its progress and the memories it created and
   * gives the operation back, still processing, to be claimed again in its bank's next turn.
   */
  yieldOperation(
    projectId: string,
    bankId: string,
    id: string,
    workerId: string,
    progress: unknown,
    memoriesCreated: number,
  ): Promise<void>;
  renewOperation(
    projectId: string,
    bankId: string,
    id: string,
    workerId: string,
    leaseMs: number,
  ): Promise<boolean>;
  finishOperation(
    projectId: string,
    bankId: string,
    id: string,
    workerId: string,
    outcome: {
      status: 'completed' | 'failed';
      memoriesCreated?: number;
      error?: string;
      /** What the operation hands back beside its counts (`result_metadata`). */
      result?: Record<string, unknown>;
      /**
       * A failed operation's part of its charge not used (what it did not store), from the
       * progress its row records (read under its lock: what its stored slices recorded with their
       * writes): given back, up to what it holds, in the transaction that marks it failed. Only
       * the worker holding its lease marks it, so however many workers race on it, this is given
       * back once.
       */
      giveBack?: (progress: unknown) => ChargeBack;
    },
  ): Promise<void>;
  retryOperation(
    projectId: string,
    bankId: string,
    id: string,
    workerId: string,
    delayMs: number,
    error: string,
  ): Promise<void>;
  countPendingOperations(): Promise<number>;
}

/** A claimed operation (see `claimOperation`). */
export interface Claimed {
  operation: Operation;
  projectId: string;
  payload: unknown;
  progress: unknown;
  /**
   * Its bank's creation instant, read with the claim (`banks.created_at` as text): the
   * incarnation of the bank it runs for (store/fence.ts); null when it has no bank row.
   */
  bankCreatedAt: string | null;
}

/** Idempotency keys, and the answers kept for their retries. */
export interface IdempotencyStore {
  /** `staleMs`: an in-progress claim older than this was left by a dead request and is taken over. */
  claimIdempotencyKey(
    scope: IdempotencyScope,
    requestHash: string,
    staleMs: number,
  ): Promise<IdempotencyClaim>;
  /** Keeps the answer of a claimed key; nothing is kept when the claim is gone (dropped meanwhile). */
  saveIdempotentResponse(scope: IdempotencyScope, reply: IdempotentReply): Promise<void>;
  releaseIdempotencyKey(scope: IdempotencyScope): Promise<void>;
  /** Drops the kept answers of a bank (its encryption setting switched, or it was deleted). */
  deleteIdempotentResponses(projectId: string, bankId: string): Promise<void>;
}

/** The listing's order, newest first (index operations_bank, then ties by id). */
const BY_CREATION: OrderKey[] = [
  { expr: 'created_at', type: 'timestamptz', desc: true },
  { expr: 'id', type: 'uuid' },
];

const OP_COLUMNS = `id::text AS id, project_id, bank_id, kind, status, items_count, memories_created, error, attempts,
  result_metadata,
  created_at, updated_at, extract(epoch FROM created_at) * 1000000 AS seq`;

type OpRow = Operation & { project_id: string; seq: number };
/** Which operations a listing keeps. */
export interface OperationFilter {
  status?: string;
  kind?: string;
}

/** The filter's conditions (`AND …`), its parameters after the bank's two. */
function operationFilter(filter: OperationFilter, params: unknown[]): string {
  let extra = '';
  if (filter.status) {
    params.push(filter.status);
    extra += ` AND status = $${params.length}`;
  }
  if (filter.kind) {
    params.push(filter.kind);
    extra += ` AND kind = $${params.length}`;
  }
  return extra;
}

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

const RUNNABLE = `((o.status = 'pending' AND o.run_after <= now()) OR (o.status = 'processing' AND o.locked_until < now()))`;

/** Banks tried per claim before falling back to any runnable operation. */
const CANDIDATES = 16;

/**
 * The banks with runnable work, the longest-waiting project first and within it the
 * longest-waiting bank. The banks with any queued work are found by skipping through the
 * operations_fair index (one probe per bank, however long a bank's backlog), not by reading
 * every queued operation.
 */
const CANDIDATE_BANKS = `
  WITH RECURSIVE w(project_id, bank_id) AS (
    (SELECT project_id, bank_id FROM operations WHERE status IN ('pending', 'processing')
     ORDER BY project_id, bank_id LIMIT 1)
    UNION ALL
    SELECT n.project_id, n.bank_id FROM w CROSS JOIN LATERAL (
      SELECT o.project_id, o.bank_id FROM operations o
      WHERE o.status IN ('pending', 'processing') AND (o.project_id, o.bank_id) > (w.project_id, w.bank_id)
      ORDER BY o.project_id, o.bank_id LIMIT 1) n)
  SELECT w.project_id, w.bank_id FROM w
  LEFT JOIN operation_turns pt ON pt.project_id = w.project_id AND pt.bank_id = ''
  LEFT JOIN operation_turns bt ON bt.project_id = w.project_id AND bt.bank_id = w.bank_id
  WHERE EXISTS (SELECT 1 FROM operations o WHERE o.project_id = w.project_id AND o.bank_id = w.bank_id
    AND o.status IN ('pending', 'processing') AND ${RUNNABLE})
  ORDER BY pt.claimed_at NULLS FIRST, bt.claimed_at NULLS FIRST, w.project_id, w.bank_id
  LIMIT $1`;

/**
 * Claims the next runnable operation of one bank (any bank with `bank` null) and records the
 * turn of its project and bank, in one statement.
 * The candidate is a materialized CTE, picked once: as a subquery joined to the UPDATE the
 * planner may rescan it per row, and each rescan skips the row just claimed and claims the next
 * one too, which then sits in 'processing' with nobody running it.
 */
async function claimIn(
  db: Db,
  workerId: string,
  leaseMs: number,
  bank: { project_id: string; bank_id: string } | null,
  withPayload: boolean,
): Promise<Claimed | null> {
  const rows = await db.query<OpRow & { payload: unknown; progress: unknown; bank_created: string | null }>(
    `WITH c AS MATERIALIZED (
       SELECT o.project_id, o.bank_id, o.id FROM operations o
       WHERE o.status IN ('pending', 'processing') AND ${RUNNABLE}
         ${bank ? 'AND o.project_id = $3 AND o.bank_id = $4' : ''}
       ORDER BY o.run_after, o.created_at LIMIT 1 FOR UPDATE SKIP LOCKED),
     u AS (
       UPDATE operations o SET status = 'processing', attempts = o.attempts + 1, locked_by = $1,
         locked_until = now() + ($2::int * interval '1 millisecond'), updated_at = now()
       FROM c
       WHERE o.project_id = c.project_id AND o.bank_id = c.bank_id AND o.id = c.id
       RETURNING o.id::text AS id, o.project_id, o.bank_id, o.kind, o.status, o.items_count, o.memories_created,
         o.error, o.attempts, o.created_at, o.updated_at, ${withPayload ? 'o.payload' : 'NULL::jsonb AS payload'},
         o.progress, 0 AS seq,
         (SELECT b.created_at::text FROM banks b WHERE b.project_id = o.project_id AND b.id = o.bank_id) AS bank_created),
     t AS (
       INSERT INTO operation_turns (project_id, bank_id, claimed_at)
       SELECT u.project_id, x.bank_id, clock_timestamp() FROM u CROSS JOIN LATERAL (VALUES (''), (u.bank_id)) x(bank_id)
       ON CONFLICT (project_id, bank_id) DO UPDATE SET claimed_at = excluded.claimed_at)
     SELECT * FROM u`,
    bank ? [workerId, leaseMs, bank.project_id, bank.bank_id] : [workerId, leaseMs],
  );
  const r = rows[0];
  if (!r) return null;
  const { payload, progress, bank_created, ...op } = r;
  return {
    operation: view(op),
    projectId: r.project_id,
    bankCreatedAt: bank_created,
    payload: !withPayload
      ? undefined
      : partsOf(payload) === null
        ? payload
        : (await payloadOf(db, r.project_id, r.bank_id, r.id))?.payload,
    progress,
  };
}

/**
 * An operation's payload and the length of its JSON text, read whole or, when kept in parts,
 * a part a statement in one snapshot; null when the operation is gone.
 */
/** An operation's stored payload as text (a stub when it is in parts); undefined when the operation is gone. */
async function payloadStub(q: Queryable, projectId: string, bankId: string, id: string) {
  const rows = await q.query<{ payload: string | null }>(
    'SELECT payload::text AS payload FROM operations WHERE project_id = $1 AND bank_id = $2 AND id = $3',
    [projectId, bankId, id],
  );
  return rows.length === 0 ? undefined : (rows[0]!.payload ?? null);
}

async function payloadOf(
  db: Db,
  projectId: string,
  bankId: string,
  id: string,
): Promise<{ payload: unknown; bytes: number } | null> {
  const read = (q: Queryable) => payloadStub(q, projectId, bankId, id);
  const text = await read(db);
  if (text === undefined) return null;
  if (text === null) return { payload: null, bytes: 0 };
  const payload: unknown = JSON.parse(text);
  if (partsOf(payload) === null) return { payload, bytes: text.length };
  // Read again with the parts in one snapshot: an encryption switch may replace both meanwhile.
  const whole = await db.transaction(async (tx) => {
    const stub = await read(tx);
    const count = stub ? partsOf(JSON.parse(stub)) : null;
    // Parts missing: the operation was deleted or its payload emptied between the two reads.
    return count === null ? stub : ((await readPayloadParts(tx, projectId, bankId, id, count)) ?? undefined);
  }, 'snapshot');
  if (whole === undefined) return null;
  if (whole === null) return { payload: null, bytes: 0 };
  return { payload: JSON.parse(whole), bytes: whole.length };
}

/** An `OperationCharge` as JSON keeps it (windows as ISO text). */
type StoredCharge = {
  items?: { windowStart: string; amount: number };
  counters: { kind: string; subject: string; windowStart: string; amount: number }[];
};

function chargeOf(stored: StoredCharge | null): OperationCharge | null {
  if (!stored || !Array.isArray(stored.counters)) return null;
  return {
    ...(stored.items ? { items: { ...stored.items, windowStart: new Date(stored.items.windowStart) } } : {}),
    counters: stored.counters.map((c) => ({ ...c, windowStart: new Date(c.windowStart) })),
  };
}

/** Splits a held charge into what `back` gives back (never more than held) and what stays held. */
function takeBack(
  charge: OperationCharge,
  back: ChargeBack,
): { left: OperationCharge; given: OperationCharge } {
  const items = charge.items && Math.min(charge.items.amount, Math.max(0, back.items));
  const counters = charge.counters.map((c) => ({
    ...c,
    amount: Math.min(c.amount, Math.max(0, back.units[c.kind] ?? 0)),
  }));
  return {
    given: {
      ...(charge.items && items ? { items: { ...charge.items, amount: items } } : {}),
      counters: counters.filter((c) => c.amount > 0),
    },
    left: {
      ...(charge.items ? { items: { ...charge.items, amount: charge.items.amount - (items ?? 0) } } : {}),
      counters: charge.counters.map((c, i) => ({ ...c, amount: c.amount - counters[i]!.amount })),
    },
  };
}

/**
 * What an unfinished operation did not do of its work, as the part of its charge it gives back
 * (from its payload, opened, and its progress); null: nothing.
 */
export type Undone = (kind: string, payload: unknown, progress: unknown) => ChargeBack | null;

/**
 * In a bank deletion's transaction, the bank row locked for update (so no fenced slice of its
 * operations is under way: store/fence.ts): its unfinished operations (pending, processing) give
 * back what they hold of their charge and did not do (`undone`; all of it for one that never
 * recorded progress), before their rows go with the bank. Their rows are locked first: a worker
 * failing one at the same time then finds no row, and gives nothing back a second time.
 */
export async function giveBackUnfinished(
  tx: Queryable,
  projectId: string,
  bankId: string,
  undone: Undone,
): Promise<void> {
  const held = await tx.query<HeldCharge>(
    `SELECT id::text AS id, kind, charge, progress FROM operations
     WHERE project_id = $1 AND bank_id = $2 AND status IN ('pending', 'processing') AND charge IS NOT NULL
     ORDER BY id FOR UPDATE`,
    [projectId, bankId],
  );
  for (const op of held) {
    const split = await splitUndone(op, async (progress) => {
      const stub = await payloadStub(tx, projectId, bankId, op.id);
      const count = stub ? partsOf(JSON.parse(stub)) : null;
      const text = count === null ? stub : await readPayloadParts(tx, projectId, bankId, op.id, count);
      return undone(op.kind, text ? JSON.parse(text) : null, progress);
    });
    if (split) await refund(tx, projectId, split.given);
  }
}

/** An unfinished operation's charge, as read (locked) to give back what it did not do. */
interface HeldCharge {
  id: string;
  kind: string;
  charge: StoredCharge | null;
  progress: unknown;
}

/**
 * Splits what an unfinished operation holds (its row read under its lock) into what it gives back
 * for the work it did not do (`undone`, from the progress its row records; all of it before its
 * first slice) and what stays held; null when it holds nothing or `undone` gives nothing back.
 */
async function splitUndone(
  op: Pick<HeldCharge, 'charge' | 'progress'>,
  undone: (progress: unknown) => ChargeBack | null | Promise<ChargeBack | null>,
): Promise<{ left: OperationCharge; given: OperationCharge } | null> {
  const charge = chargeOf(op.charge);
  if (!charge) return null;
  if (op.progress === null) return { given: charge, left: { counters: [] } };
  const back = await undone(op.progress);
  return back ? takeBack(charge, back) : null;
}

/** Gives a charge back, in `q` (the transaction that records why). */
async function refund(q: Queryable, projectId: string, given: OperationCharge): Promise<void> {
  if (given.items) await refundDayItems(q, projectId, given.items.amount, given.items.windowStart);
  await refundCounters(q, projectId, given.counters);
}

/**
 * In the transaction of a slice's write (`slice`), after the bank's lock: takes the operation's
 * row lock, provided the worker still holds its lease (a cancel, or another worker that took it
 * over, wins: `OperationLost`, and the transaction writes nothing). `record` then stores where the
 * operation stands and the memories the slice wrote, before the same commit.
 */
export async function holdSliceIn(
  tx: Queryable,
  projectId: string,
  bankId: string,
  slice: OperationSlice,
): Promise<{ record(created: number): Promise<void> }> {
  const key = [projectId, bankId, slice.id, slice.workerId];
  const held = await tx.query(
    `SELECT 1 FROM operations WHERE project_id = $1 AND bank_id = $2 AND id = $3 AND locked_by = $4
       AND status = 'processing' FOR UPDATE`,
    key,
  );
  if (!held.length) throw new OperationLost(slice.id);
  return {
    async record(created) {
      await tx.query(
        `UPDATE operations SET progress = $5::jsonb, memories_created = memories_created + $6, updated_at = now()
         WHERE project_id = $1 AND bank_id = $2 AND id = $3 AND locked_by = $4`,
        [...key, JSON.stringify(slice.progress), created],
      );
    },
  };
}

/** How often a process sweeps idempotency keys older than a day. */
const IDEMPOTENCY_SWEEP_MS = 60_000;

/** Durable operations (claimed with FOR UPDATE SKIP LOCKED) and idempotency keys. */
export function operationQueries(db: Db): OperationStore & IdempotencyStore {
  let lastSweep = 0;
  return {
    async insertOperation(o) {
      const { stored, parts } = storedPayload(o.payload);
      // The row and, for a long payload, its parts: all or nothing (see payload-parts.ts).
      const insert = async (q: Queryable, onConflict: string) => {
        const rows = await q.query<OpRow>(
          `INSERT INTO operations (project_id, bank_id, id, kind, payload, items_count, charge)
           VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7::jsonb) ${onConflict} RETURNING ${OP_COLUMNS}`,
          [
            o.projectId,
            o.bankId,
            o.id,
            o.kind,
            stored,
            o.itemsCount,
            o.charge === undefined ? null : JSON.stringify(o.charge),
          ],
        );
        if (rows[0] && parts.length) await writePayloadParts(q, o.projectId, o.bankId, o.id, parts);
        return rows[0];
      };
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
          return { operation: view((await insert(tx, ''))!), created: true };
        });
      }
      const conflict = 'ON CONFLICT (project_id, bank_id, id) DO NOTHING';
      const row = parts.length
        ? await db.transaction((tx) => insert(tx, conflict))
        : await insert(db, conflict);
      if (row) return { operation: view(row), created: true };
      const existing = await db.query<OpRow>(
        `SELECT ${OP_COLUMNS} FROM operations WHERE project_id = $1 AND bank_id = $2 AND id = $3`,
        [o.projectId, o.bankId, o.id],
      );
      return { operation: view(existing[0]!), created: false };
    },
    async earlierOperationUnfinished(projectId, bankId, id, kind) {
      // EXISTS, not a count: a long queue behind one Retain is not read whole at every claim.
      const rows = await db.query<{ found: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM operations o, operations me
         WHERE me.project_id = $1 AND me.bank_id = $2 AND me.id = $3
           AND o.project_id = $1 AND o.bank_id = $2 AND o.kind = $4 AND o.status IN ('pending', 'processing')
           AND (o.created_at, o.id) < (me.created_at, me.id)) AS found`,
        [projectId, bankId, id, kind],
      );
      return rows[0]!.found;
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
      const filtered = operationFilter(filter, []) !== '';
      let where = `project_id = $1 AND bank_id = $2${filtered ? '' : operationFilter(filter, params)}`;
      const after = decodeOperationCursor(page.cursor);
      if (after) {
        // After the last one listed, in the listing's order: older, or as old with a greater id
        // (operations created in the same instant share created_at).
        params.push(after.at, after.id);
        const [at, id] = [`$${params.length - 1}`, `$${params.length}`];
        where += ` AND (extract(epoch FROM created_at) * 1000000 < ${at}
          OR (extract(epoch FROM created_at) * 1000000 = ${at} AND id > ${id}::uuid))`;
      }
      const offset = after ? 0 : (page.offset ?? 0);
      const listing = { from: 'operations', where, params, order: BY_CREATION };
      let rows: OpRow[];
      if (filtered) {
        // Found in bounded hops, the filter applied in each (a status no operation has reads no
        // more per statement than a common one), then read by their keys.
        const keys = await walkPage(
          db,
          listing,
          (p) => `true${operationFilter(filter, p)}`,
          offset,
          page.limit + 1,
          page.pay,
        );
        const byKeys: unknown[] = [projectId, bankId];
        rows = await db.query<OpRow>(
          `SELECT ${OP_COLUMNS} FROM operations WHERE project_id = $1 AND bank_id = $2${rowsIn(BY_CREATION, keys, byKeys)}
           ORDER BY created_at DESC, id`,
          byKeys,
        );
      } else {
        where += await skipRows(db, listing, offset, page.pay);
        params.push(page.limit + 1);
        rows = await db.query<OpRow>(
          `SELECT ${OP_COLUMNS} FROM operations WHERE ${where} ORDER BY created_at DESC, id
           LIMIT $${params.length}`,
          params,
        );
      }
      const more = rows.length > page.limit;
      const items = rows.slice(0, page.limit);
      const last = items.at(-1);
      return {
        items: items.map(view),
        next_cursor: more && last ? encodeCursor(`${Math.floor(last.seq)}~${last.id}`) : null,
      };
    },
    async countListedOperations(projectId, bankId, filter, pay) {
      const listing = {
        from: 'operations',
        where: 'project_id = $1 AND bank_id = $2',
        params: [projectId, bankId],
        order: BY_CREATION,
      };
      return countRows(db, listing, (params) => `true${operationFilter(filter, params)}`, pay);
    },
    async countOperations(projectId, bankId, filter) {
      const params: unknown[] = [projectId, bankId];
      const rows = await db.query<{ status: string; n: number }>(
        `SELECT status, count(*)::int AS n FROM operations
         WHERE project_id = $1 AND bank_id = $2${operationFilter(filter, params)} GROUP BY status`,
        params,
      );
      return Object.fromEntries(rows.map((r) => [r.status, r.n]));
    },
    async requeueOperation(projectId, bankId, id, charge) {
      const rows = await db.query<OpRow>(
        `UPDATE operations SET status = 'pending', error = NULL, attempts = 0, run_after = now(),
           locked_by = NULL, locked_until = NULL, updated_at = now(),
           charge = CASE WHEN $5::boolean THEN $4::jsonb ELSE charge END
         WHERE project_id = $1 AND bank_id = $2 AND id = $3 AND status = 'failed' RETURNING ${OP_COLUMNS}`,
        [projectId, bankId, id, charge ? JSON.stringify(charge) : null, charge !== undefined],
      );
      return rows[0] ? view(rows[0]) : null;
    },
    async operationProgress(projectId, bankId, id) {
      const rows = await db.query<{ progress: unknown }>(
        'SELECT progress FROM operations WHERE project_id = $1 AND bank_id = $2 AND id = $3',
        [projectId, bankId, id],
      );
      return rows[0]?.progress ?? null;
    },
    async deleteFinishedOperation(projectId, bankId, id) {
      const rows = await db.query(
        `DELETE FROM operations WHERE project_id = $1 AND bank_id = $2 AND id = $3
           AND status IN ('completed', 'failed', 'cancelled') RETURNING 1`,
        [projectId, bankId, id],
      );
      return rows.length > 0;
    },
    async cancelOperation(projectId, bankId, id, opts = {}) {
      const among = opts.running ? ['pending', 'processing'] : ['pending'];
      return db.transaction(async (tx) => {
        // Locked first: a worker failing it, or writing its slice, or another cancel, waits or
        // went before (then it is in no state this takes, or its progress is recorded).
        const held = await tx.query<HeldCharge>(
          `SELECT id::text AS id, kind, charge, progress FROM operations
           WHERE project_id = $1 AND bank_id = $2 AND id = $3 AND status = ANY($4::text[]) FOR UPDATE`,
          [projectId, bankId, id, among],
        );
        if (!held[0]) return null;
        const split = opts.undone ? await splitUndone(held[0], opts.undone) : null;
        const rows = await tx.query<OpRow>(
          `UPDATE operations SET status = 'cancelled', locked_by = NULL, locked_until = NULL, updated_at = now(),
             charge = CASE WHEN $5::boolean THEN $4::jsonb ELSE charge END
           WHERE project_id = $1 AND bank_id = $2 AND id = $3 RETURNING ${OP_COLUMNS}`,
          [projectId, bankId, id, split ? JSON.stringify(split.left) : null, split !== null],
        );
        if (split) await refund(tx, projectId, split.given);
        return view(rows[0]!);
      });
    },
    async claimOperation(workerId, leaseMs, opts = {}) {
      const withPayload = opts.payload !== false;
      // Fair across tenants: the banks that have work, ordered by when their project and then
      // the bank itself last had an operation claimed (never first), are tried in turn; within a
      // bank operations run in order. A bank whose next operation another process just took
      // (SKIP LOCKED) is passed over for the next one. Should every candidate be taken, any
      // runnable operation is claimed, as before.
      const banks = await db.query<{ project_id: string; bank_id: string }>(CANDIDATE_BANKS, [CANDIDATES]);
      for (const b of banks) {
        const claimed = await claimIn(db, workerId, leaseMs, b, withPayload);
        if (claimed) return claimed;
      }
      return banks.length === CANDIDATES ? claimIn(db, workerId, leaseMs, null, withPayload) : null;
    },
    operationPayload(projectId, bankId, id) {
      return payloadOf(db, projectId, bankId, id);
    },
    async yieldOperation(projectId, bankId, id, workerId, progress, memoriesCreated) {
      // Still 'processing' (it is under way) but with its lease run out, so that the next claim,
      // by any process, picks it up again when its bank's turn comes. Fenced when its job is (a
      // yield of a deleted bank's job fails with BankGone instead of finding no row).
      await fencedWrite(db, projectId, bankId, (q) =>
        q.query(
          `UPDATE operations SET progress = $5::jsonb, memories_created = memories_created + $6, attempts = 0,
           locked_by = NULL, locked_until = '-infinity', updated_at = now()
         WHERE project_id = $1 AND bank_id = $2 AND id = $3 AND locked_by = $4`,
          [projectId, bankId, id, workerId, JSON.stringify(progress), memoriesCreated],
        ),
      );
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
      /** Marks it; `charge` (when given) is what it holds from now on. False: not this worker's. */
      const finish = async (q: Queryable, charge?: OperationCharge | null) => {
        const rows = await q.query(
          `UPDATE operations SET status = $5, memories_created = memories_created + $6, error = $7, locked_by = NULL,
             locked_until = NULL, result_metadata = $8::jsonb,
             charge = CASE WHEN $10::boolean THEN $9::jsonb ELSE charge END, updated_at = now()
           WHERE project_id = $1 AND bank_id = $2 AND id = $3 AND locked_by = $4 RETURNING 1`,
          [
            projectId,
            bankId,
            id,
            workerId,
            outcome.status,
            outcome.memoriesCreated ?? 0,
            outcome.error ?? null,
            outcome.result === undefined ? null : JSON.stringify(outcome.result),
            charge ? JSON.stringify(charge) : null,
            charge !== undefined,
          ],
        );
        return rows.length > 0;
      };
      const back = outcome.giveBack;
      // Completed (or failed with nothing to give back): what it holds stays, a record of its charge.
      if (!back) {
        // Fenced when its worker completes it: a completion of a deleted bank's job ends it so.
        await fencedWrite(db, projectId, bankId, finish);
        return;
      }
      await db.transaction(async (tx) => {
        // The row lock and the lease are the one decision: a worker whose lease another took over
        // finds no row, and the charge it holds is read and lowered under that lock.
        const held = await tx.query<{ charge: StoredCharge | null; progress: unknown }>(
          `SELECT charge, progress FROM operations WHERE project_id = $1 AND bank_id = $2 AND id = $3
             AND locked_by = $4 FOR UPDATE`,
          [projectId, bankId, id, workerId],
        );
        if (!held[0]) return;
        const split = await splitUndone(held[0], back);
        if (!(await finish(tx, split?.left)) || !split) return;
        await refund(tx, projectId, split.given);
      });
    },
    async retryOperation(projectId, bankId, id, workerId, delayMs, error) {
      // Fenced when its worker retries it, as finishOperation.
      await fencedWrite(db, projectId, bankId, (q) =>
        q.query(
          `UPDATE operations SET status = 'pending', error = $6, locked_by = NULL, locked_until = NULL,
             run_after = now() + ($5::int * interval '1 millisecond'), updated_at = now()
           WHERE project_id = $1 AND bank_id = $2 AND id = $3 AND locked_by = $4`,
          [projectId, bankId, id, workerId, delayMs, error],
        ),
      );
    },
    async countPendingOperations() {
      const rows = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM operations WHERE status IN ('pending', 'processing')`,
      );
      return rows[0]!.n;
    },
    async claimIdempotencyKey({ projectId, caller, key }, requestHash, staleMs) {
      // Keys live a day: an older row is taken over by the claim; the rest are swept at most once
      // a minute per process (one statement less on each write).
      if (Date.now() - lastSweep > IDEMPOTENCY_SWEEP_MS) {
        lastSweep = Date.now();
        await db.query(`DELETE FROM idempotency WHERE created_at < now() - interval '24 hours'`);
      }
      const inserted = await db.query(
        `INSERT INTO idempotency (project_id, caller, key, request_hash) VALUES ($1, $2, $3, $4)
         ON CONFLICT (project_id, caller, key) DO UPDATE SET request_hash = excluded.request_hash,
           status = 0, response = NULL, withheld = false, encrypted = false, bank_id = NULL, created_at = now()
         WHERE idempotency.created_at < now() - interval '24 hours'
         RETURNING key`,
        [projectId, caller, key, requestHash],
      );
      if (inserted.length) return { state: 'new' };
      // A claim left in progress longer than any request runs belongs to a process that died
      // mid-request (nothing of it was acknowledged): the retry takes it over.
      const taken = await db.query(
        `UPDATE idempotency SET created_at = now()
         WHERE project_id = $1 AND caller = $2 AND key = $3 AND request_hash = $4 AND status = 0
           AND created_at < now() - ($5::int * interval '1 millisecond') RETURNING key`,
        [projectId, caller, key, requestHash, staleMs],
      );
      if (taken.length) return { state: 'new' };
      const rows = await db.query<{
        request_hash: string;
        status: number;
        response: unknown;
        withheld: boolean;
        bank_id: string | null;
        encrypted: boolean;
      }>(
        `SELECT request_hash, status, response, withheld, bank_id, encrypted FROM idempotency
         WHERE project_id = $1 AND caller = $2 AND key = $3`,
        [projectId, caller, key],
      );
      const r = rows[0];
      if (!r) return { state: 'new' };
      if (r.request_hash !== requestHash) return { state: 'mismatch' };
      if (r.status === 0) return { state: 'in_progress' };
      return {
        state: 'done',
        status: r.status,
        response: r.response,
        withheld: r.withheld,
        bankId: r.bank_id,
        encrypted: r.encrypted,
      };
    },
    async saveIdempotentResponse({ projectId, caller, key }, reply) {
      await db.query(
        `UPDATE idempotency SET status = $4, response = $5::jsonb, withheld = $6, bank_id = $7, encrypted = $8
         WHERE project_id = $1 AND caller = $2 AND key = $3 AND status = 0`,
        [
          projectId,
          caller,
          key,
          reply.status,
          JSON.stringify(reply.response),
          reply.withheld,
          reply.bankId,
          reply.encrypted ?? false,
        ],
      );
    },
    async releaseIdempotencyKey({ projectId, caller, key }) {
      await db.query(
        'DELETE FROM idempotency WHERE project_id = $1 AND caller = $2 AND key = $3 AND status = 0',
        [projectId, caller, key],
      );
    },
    async deleteIdempotentResponses(projectId, bankId) {
      await db.query('DELETE FROM idempotency WHERE project_id = $1 AND bank_id = $2', [projectId, bankId]);
    },
  };
}
