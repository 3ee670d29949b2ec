import type { Db, Queryable } from '../db.js';
import { StoredQuotaExceeded } from '../quota-error.js';
import type { BudgetName } from '../records.js';

/** One rate-limit counter after a request was counted. */
export interface RateCount {
  scope: 'project' | 'key';
  count: number;
  limit: number;
}

/** Outcome of charging a Retain against the items-per-day and stored-memories quotas. */
export type ItemsCharge =
  | { accepted: true }
  | { accepted: false; exceeded: 'retained_items_per_day' | 'stored_memories'; limit: number; used: number };

/**
 * One cost counter to charge: the project's limit `name` (its own setting, else `defaultLimit`;
 * null = unlimited, and then nothing is counted) over the counter (kind, subject, window).
 */
export interface CostCharge {
  name: BudgetName;
  kind: string;
  subject: string;
  windowStart: Date;
  amount: number;
  defaultLimit: number | null;
}

/** A cost counter after a charge: `used` is the count after an accepted charge, before a refused one. */
export interface CostCount {
  name: BudgetName;
  limit: number;
  used: number;
}

/** Outcome of a cost charge: all counters charged, or none (the first refusing counter is named). */
export type CostResult =
  | { accepted: true; counts: CostCount[] }
  | { accepted: false; exceeded: CostCount; amount: number };

/** Server-wide defaults for projects that do not set a limit themselves (null = unlimited). */
export interface LimitDefaults {
  requestsPerMinute: number | null;
  requestsPerMinutePerKey: number | null;
  retainedItemsPerDay: number | null;
  storedMemories: number | null;
  /** Defaults of the cost budgets (`MNEMO_DEFAULT_CHARACTERS_PER_MINUTE`, ...); absent = unlimited. */
  budgets?: Partial<Record<BudgetName, number | null>>;
}

/** Rate limits, quotas and cost budgets: fixed-window counters shared by every process on the database. */
export interface LimitStore {
  /** Counts one request of the project (and key) in the window; returns the counters that have a limit. */
  countRequest(input: {
    projectId: string;
    keyId: string | null;
    windowStart: Date;
    defaults: Pick<LimitDefaults, 'requestsPerMinute' | 'requestsPerMinutePerKey'>;
    /** Requests to count (default 1): an MCP batch counts each call it carries. */
    requests?: number;
  }): Promise<RateCount[]>;
  /** Counts `items` retained items of the day unless a quota would be exceeded (then nothing is counted). */
  chargeItems(input: {
    projectId: string;
    items: number;
    windowStart: Date;
    defaults: Pick<LimitDefaults, 'retainedItemsPerDay' | 'storedMemories'>;
  }): Promise<ItemsCharge>;
  /** Gives back items charged by a Retain that then failed. */
  refundItems(projectId: string, items: number, windowStart: Date): Promise<void>;
  projectUsage(
    projectId: string,
    windows: { minuteStart: Date; dayStart: Date },
  ): Promise<{ requests_this_minute: number; retained_items_today: number; stored_memories: number }>;
  /**
   * Charges cost counters in one statement, all or nothing: unless `force`, a counter is only
   * charged when its count stays within its limit (a zero amount asks for room: count < limit),
   * and a refusal gives back what the same call charged on other counters. `force` charges
   * regardless (cost already incurred). Counters without a limit are not written.
   */
  chargeCost(projectId: string, charges: CostCharge[], force: boolean): Promise<CostResult>;
  /**
   * Gives back an accepted charge whose work was then refused (never below zero): `charges` as
   * they were charged (same windows), only the counters the charge wrote (those with a limit).
   */
  refundCost(
    projectId: string,
    charges: Pick<CostCharge, 'kind' | 'subject' | 'windowStart' | 'amount'>[],
  ): Promise<void>;
  /** Current counts of cost counters (0 for none). */
  costCounts(
    projectId: string,
    counters: Pick<CostCharge, 'name' | 'kind' | 'subject' | 'windowStart'>[],
  ): Promise<Map<BudgetName, number>>;
  /**
   * Puts a claimed operation of a project over its budget back to pending until `delayMs` from
   * now, without using up one of its attempts (waiting is not failing).
   */
  deferOperation(
    projectId: string,
    bankId: string,
    id: string,
    workerId: string,
    delayMs: number,
    reason: string,
  ): Promise<void>;
  /** Deletes counters of windows that started before `before`; returns how many. */
  pruneRateCounters(before: Date): Promise<number>;
}

/** "No default" in the int8[] of defaults (an array of numbers travels the same on both engines). */
const NONE = -1;

/**
 * The effective value of one limit: the project's own setting when the key is present in
 * `projects.limits` (JSON null there means unlimited), the server default otherwise.
 */
const effective = (key: string, param: string) =>
  `CASE WHEN limits ? '${key}' THEN (limits->>'${key}')::bigint ELSE ${param}::bigint END`;

/**
 * The project's `stored_memories` quota, taken for a write: when the project has one (its own
 * or the server's `defaultLimit`), locks the project row until the transaction ends and returns
 * the quota; null (and no lock) when it has none. Every quota-checked write of the project, in
 * any process, then runs its check and insert one at a time. Taken first in the transaction,
 * before any bank row: a project's deletion locks the project before its banks too.
 * `FOR NO KEY UPDATE` does not block the key-share locks of rows that reference the project
 * (a new bank, a key), only other quota writers and changes of the project row itself.
 */
export async function lockStoredQuotaIn(
  tx: Queryable,
  projectId: string,
  defaultLimit: number | null,
): Promise<number | null> {
  const quota = (lock: string) =>
    tx.query<{ lim: number | null }>(
      `SELECT ${effective('stored_memories', '$2')} AS lim FROM projects WHERE id = $1 ${lock}`,
      [projectId, defaultLimit],
    );
  // Unlocked first: a project without a quota must not serialise its writers.
  if ((await quota(''))[0]?.lim == null) return null;
  const lim = (await quota('FOR NO KEY UPDATE'))[0]?.lim;
  return lim == null ? null : Number(lim);
}

/**
 * Refuses (`StoredQuotaExceeded`) a write of `adding` memories that would take the project past
 * `limit`. Run under `lockStoredQuotaIn`'s lock, after the write's own deletions: on PostgreSQL
 * this statement's snapshot is taken after the lock was granted, so it sees every memory
 * committed by the writers before it.
 */
export async function checkStoredQuotaIn(
  tx: Queryable,
  projectId: string,
  limit: number,
  adding: number,
): Promise<void> {
  const [row] = await tx.query<{ stored: number }>(
    'SELECT coalesce(sum(memory_count), 0)::int8 AS stored FROM banks WHERE project_id = $1',
    [projectId],
  );
  const stored = Number(row?.stored ?? 0);
  if (stored + adding > limit) throw new StoredQuotaExceeded(limit, stored, adding);
}

/**
 * Gives back cost counters (never below zero), in `q`: a transaction that also records why (an
 * operation marked failed) gives back in the same commit.
 */
export async function refundCounters(
  q: Queryable,
  projectId: string,
  charges: Pick<CostCharge, 'kind' | 'subject' | 'windowStart' | 'amount'>[],
): Promise<void> {
  const given = charges.filter((c) => c.amount > 0);
  if (!given.length) return;
  // Locks the rows in the catalogue's order first, as a charge does: an UPDATE ... FROM
  // locks in whatever order its join yields, which can deadlock with a concurrent charge.
  await q.query(
    `WITH u AS (
       SELECT * FROM unnest($2::text[], $3::text[], $4::timestamptz[], $5::int8[])
         WITH ORDINALITY AS u(kind, subject, win, amount, ord)),
     l AS MATERIALIZED (
       SELECT r.kind, r.subject, r.window_start, u.amount FROM rate_counters r
       JOIN u ON r.project_id = $1 AND r.kind = u.kind AND r.subject = u.subject AND r.window_start = u.win
       ORDER BY u.ord FOR UPDATE OF r)
     UPDATE rate_counters r SET count = greatest(r.count - l.amount, 0) FROM l
     WHERE r.project_id = $1 AND r.kind = l.kind AND r.subject = l.subject AND r.window_start = l.window_start`,
    [
      projectId,
      given.map((c) => c.kind),
      given.map((c) => c.subject),
      given.map((c) => c.windowStart),
      given.map((c) => Math.max(0, Math.round(c.amount))),
    ],
  );
}

/** Gives back retained items of the day (never below zero), in `q` (see `refundCounters`). */
export async function refundDayItems(
  q: Queryable,
  projectId: string,
  items: number,
  windowStart: Date,
): Promise<void> {
  if (items <= 0) return;
  await q.query(
    `UPDATE rate_counters SET count = greatest(count - $2, 0)
     WHERE project_id = $1 AND kind = 'items' AND subject = '' AND window_start = $3`,
    [projectId, items, windowStart],
  );
}

/**
 * Rate limits and quotas as fixed-window counters in `rate_counters`. Every statement here is
 * a single round trip, so every mnemo process on the database counts against the same rows.
 */
export function limitQueries(db: Db): LimitStore {
  /** Takes `amount` back off each counter (never below zero). */
  const refund = (
    projectId: string,
    charges: Pick<CostCharge, 'kind' | 'subject' | 'windowStart' | 'amount'>[],
  ) => refundCounters(db, projectId, charges);
  return {
    async countRequest({ projectId, keyId, windowStart, defaults, requests = 1 }) {
      // Reads the project's limits and bumps the project's (and the key's) counter of this
      // window in one statement; rows are only written for limits that apply. The two rows are
      // always upserted in the same order, so concurrent requests cannot deadlock. The
      // statement's own transaction commits asynchronously (no WAL flush wait): a crash may
      // forget the last fraction of a second of counts, which a rate limit can afford.
      const rows = await db.query<{ subject: string; count: number; lim: number }>(
        `WITH p AS (
           SELECT ${effective('requests_per_minute', '$4')} AS project_limit,
                  ${effective('requests_per_minute_per_key', '$5')} AS key_limit,
                  set_config('synchronous_commit', 'off', true) AS async_commit
           FROM projects WHERE id = $1)
         INSERT INTO rate_counters (project_id, kind, subject, window_start, count, lim)
         SELECT $1, 'requests', w.subject, $3::timestamptz, $6::int8, w.lim
         FROM p CROSS JOIN LATERAL (VALUES (1, '', p.project_limit), (2, $2::text, p.key_limit)) AS w(ord, subject, lim)
         WHERE w.lim IS NOT NULL AND w.subject IS NOT NULL
         ORDER BY w.ord
         ON CONFLICT (project_id, kind, subject, window_start)
           DO UPDATE SET count = rate_counters.count + excluded.count, lim = excluded.lim
         RETURNING subject, count::int8 AS count, lim::int8 AS lim`,
        [
          projectId,
          keyId,
          windowStart,
          defaults.requestsPerMinute,
          defaults.requestsPerMinutePerKey,
          requests,
        ],
      );
      return rows.map(
        (r): RateCount => ({
          scope: r.subject === '' ? 'project' : 'key',
          count: Number(r.count),
          limit: Number(r.lim),
        }),
      );
    },

    async chargeItems({ projectId, items, windowStart, defaults }) {
      // Checks both quotas and counts the items in one statement. The counter row is only
      // written when both quotas allow the whole batch (the conditional DO UPDATE re-checks the
      // day's count under the row lock, so concurrent retains cannot overshoot it together).
      const rows = await db.query<{
        items_limit: number | null;
        stored_limit: number | null;
        stored: number;
        used_before: number | null;
        used_after: number | null;
      }>(
        `WITH p AS (
           SELECT ${effective('retained_items_per_day', '$4')} AS items_limit,
                  ${effective('stored_memories', '$5')} AS stored_limit
           FROM projects WHERE id = $1),
         s AS (
           SELECT coalesce(sum(memory_count), 0)::int8 AS stored FROM banks
           WHERE project_id = $1 AND (SELECT stored_limit FROM p) IS NOT NULL),
         c AS (
           SELECT count FROM rate_counters
           WHERE project_id = $1 AND kind = 'items' AND subject = '' AND window_start = $3::timestamptz),
         up AS (
           INSERT INTO rate_counters (project_id, kind, subject, window_start, count, lim)
           SELECT $1, 'items', '', $3::timestamptz, $2::int8, p.items_limit FROM p, s
           WHERE (p.stored_limit IS NULL OR s.stored + $2::int8 <= p.stored_limit)
             AND (p.items_limit IS NULL OR $2::int8 <= p.items_limit)
           ON CONFLICT (project_id, kind, subject, window_start) DO UPDATE
             SET count = rate_counters.count + excluded.count, lim = excluded.lim
             WHERE excluded.lim IS NULL OR rate_counters.count + excluded.count <= excluded.lim
           RETURNING count)
         SELECT p.items_limit::int8 AS items_limit, p.stored_limit::int8 AS stored_limit, s.stored,
                (SELECT count FROM c)::int8 AS used_before, (SELECT count FROM up)::int8 AS used_after
         FROM p, s`,
        [projectId, items, windowStart, defaults.retainedItemsPerDay, defaults.storedMemories],
      );
      const r = rows[0];
      if (!r) return { accepted: true };
      const num = (v: number | null) => (v === null ? null : Number(v));
      if (r.used_after !== null) return { accepted: true };
      const stored = Number(r.stored);
      const storedLimit = num(r.stored_limit);
      if (storedLimit !== null && stored + items > storedLimit) {
        return { accepted: false, exceeded: 'stored_memories', limit: storedLimit, used: stored };
      }
      return {
        accepted: false,
        exceeded: 'retained_items_per_day',
        limit: num(r.items_limit) ?? 0,
        used: num(r.used_before) ?? 0,
      } satisfies ItemsCharge;
    },

    async refundItems(projectId, items, windowStart) {
      await refundDayItems(db, projectId, items, windowStart);
    },

    async projectUsage(projectId, windows) {
      const rows = await db.query<{ requests: number | null; items: number | null; stored: number }>(
        `SELECT
           (SELECT count FROM rate_counters WHERE project_id = $1 AND kind = 'requests' AND subject = ''
              AND window_start = $2)::int8 AS requests,
           (SELECT count FROM rate_counters WHERE project_id = $1 AND kind = 'items' AND subject = ''
              AND window_start = $3)::int8 AS items,
           (SELECT coalesce(sum(memory_count), 0) FROM banks WHERE project_id = $1)::int8 AS stored`,
        [projectId, windows.minuteStart, windows.dayStart],
      );
      const r = rows[0]!;
      return {
        requests_this_minute: Number(r.requests ?? 0),
        retained_items_today: Number(r.items ?? 0),
        stored_memories: Number(r.stored),
      };
    },

    async chargeCost(projectId, charges, force) {
      if (charges.length === 0) return { accepted: true, counts: [] };
      // One statement reads the project's limits and charges every counter that has one. A
      // counter's conditional DO UPDATE re-checks its count under the row lock, so concurrent
      // charges (from any process) can never take it past its limit; rows are upserted in the
      // caller's order, which is always the catalogue's, so two charges cannot deadlock. As for
      // request counts, the statement's own transaction commits asynchronously.
      const rows = await db.query<{
        name: BudgetName;
        kind: string;
        subject: string;
        win: Date;
        amount: number;
        lim: number | null;
        after: number | null;
        before: number | null;
      }>(
        `WITH p AS (
           SELECT limits, set_config('synchronous_commit', 'off', true) AS async_commit
           FROM projects WHERE id = $1),
         w AS (
           SELECT c.ord, c.name, c.kind, c.subject, c.win, c.amount,
                  CASE WHEN p.limits ? c.name THEN (p.limits->>c.name)::int8 ELSE nullif(c.dflt, ${NONE}) END AS lim
           FROM p CROSS JOIN unnest($2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::int8[], $7::int8[])
             WITH ORDINALITY AS c(name, kind, subject, win, amount, dflt, ord)),
         up AS (
           INSERT INTO rate_counters (project_id, kind, subject, window_start, count, lim)
           SELECT $1, w.kind, w.subject, w.win, w.amount, w.lim FROM w
           WHERE w.lim IS NOT NULL AND ($8::bool OR (w.amount <= w.lim AND w.lim > 0))
           ORDER BY w.ord
           ON CONFLICT (project_id, kind, subject, window_start) DO UPDATE
             SET count = rate_counters.count + excluded.count, lim = excluded.lim
             WHERE $8::bool OR (rate_counters.count + excluded.count <= excluded.lim
               AND (excluded.count > 0 OR rate_counters.count < excluded.lim))
           RETURNING kind, subject, window_start, count)
         SELECT w.name, w.kind, w.subject, w.win, w.amount, w.lim::int8 AS lim, up.count::int8 AS after,
                (SELECT r.count FROM rate_counters r WHERE r.project_id = $1 AND r.kind = w.kind
                   AND r.subject = w.subject AND r.window_start = w.win)::int8 AS before
         FROM w LEFT JOIN up ON up.kind = w.kind AND up.subject = w.subject AND up.window_start = w.win
         ORDER BY w.ord`,
        [
          projectId,
          charges.map((c) => c.name),
          charges.map((c) => c.kind),
          charges.map((c) => c.subject),
          charges.map((c) => c.windowStart),
          charges.map((c) => Math.max(0, Math.round(c.amount))),
          charges.map((c) => c.defaultLimit ?? NONE),
          force,
        ],
      );
      const limited = rows.filter((r) => r.lim !== null);
      const refused = limited.find((r) => r.after === null);
      if (!refused) {
        return {
          accepted: true,
          counts: limited.map(
            (r): CostCount => ({ name: r.name, limit: Number(r.lim), used: Number(r.after) }),
          ),
        };
      }
      await refund(
        projectId,
        limited
          .filter((r) => r.after !== null)
          .map((r) => ({ kind: r.kind, subject: r.subject, windowStart: r.win, amount: Number(r.amount) })),
      );
      return {
        accepted: false,
        exceeded: { name: refused.name, limit: Number(refused.lim), used: Number(refused.before ?? 0) },
        amount: Number(refused.amount),
      };
    },

    refundCost: (projectId, charges) => refund(projectId, charges),

    async costCounts(projectId, counters) {
      const rows = await db.query<{ name: BudgetName; count: number | null }>(
        `SELECT c.name, r.count::int8 AS count
         FROM unnest($2::text[], $3::text[], $4::text[], $5::timestamptz[]) AS c(name, kind, subject, win)
         LEFT JOIN rate_counters r ON r.project_id = $1 AND r.kind = c.kind AND r.subject = c.subject
           AND r.window_start = c.win`,
        [
          projectId,
          counters.map((c) => c.name),
          counters.map((c) => c.kind),
          counters.map((c) => c.subject),
          counters.map((c) => c.windowStart),
        ],
      );
      return new Map(rows.map((r) => [r.name, Number(r.count ?? 0)]));
    },

    async deferOperation(projectId, bankId, id, workerId, delayMs, reason) {
      await db.query(
        `UPDATE operations SET status = 'pending', error = $6, locked_by = NULL, locked_until = NULL,
           attempts = greatest(attempts - 1, 0), run_after = now() + ($5::int * interval '1 millisecond'),
           updated_at = now()
         WHERE project_id = $1 AND bank_id = $2 AND id = $3 AND locked_by = $4`,
        [projectId, bankId, id, workerId, Math.round(delayMs), reason],
      );
    },

    async pruneRateCounters(before) {
      const rows = await db.query('DELETE FROM rate_counters WHERE window_start < $1 RETURNING 1', [before]);
      return rows.length;
    },
  };
}
