import type { Db } from '../db.js';
import type { ItemsCharge, RateCount, Store } from '../store.js';

type LimitStore = Pick<
  Store,
  'countRequest' | 'chargeItems' | 'refundItems' | 'projectUsage' | 'pruneRateCounters'
>;

/**
 * The effective value of one limit: the project's own setting when the key is present in
 * `projects.limits` (JSON null there means unlimited), the server default otherwise.
 */
const effective = (key: string, param: string) =>
  `CASE WHEN limits ? '${key}' THEN (limits->>'${key}')::bigint ELSE ${param}::bigint END`;

/**
 * Rate limits and quotas as fixed-window counters in `rate_counters`. Every statement here is
 * a single round trip, so every mnemo process on the database counts against the same rows.
 */
export function limitQueries(db: Db): LimitStore {
  return {
    async countRequest({ projectId, keyId, windowStart, defaults }) {
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
         SELECT $1, 'requests', w.subject, $3::timestamptz, 1, w.lim
         FROM p CROSS JOIN LATERAL (VALUES (1, '', p.project_limit), (2, $2::text, p.key_limit)) AS w(ord, subject, lim)
         WHERE w.lim IS NOT NULL AND w.subject IS NOT NULL
         ORDER BY w.ord
         ON CONFLICT (project_id, kind, subject, window_start)
           DO UPDATE SET count = rate_counters.count + 1, lim = excluded.lim
         RETURNING subject, count::int8 AS count, lim::int8 AS lim`,
        [projectId, keyId, windowStart, defaults.requestsPerMinute, defaults.requestsPerMinutePerKey],
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
      await db.query(
        `UPDATE rate_counters SET count = greatest(count - $2, 0)
         WHERE project_id = $1 AND kind = 'items' AND subject = '' AND window_start = $3`,
        [projectId, items, windowStart],
      );
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

    async pruneRateCounters(before) {
      const rows = await db.query('DELETE FROM rate_counters WHERE window_start < $1 RETURNING 1', [before]);
      return rows.length;
    },
  };
}
