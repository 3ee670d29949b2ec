import type { Db } from '../db.js';

/** What a bank holds, counted: its statistics page and Hindsight's `stats`. */
export interface BankStatsRecord {
  /** Memories by fact type (observations included). */
  memoriesByType: Record<string, number>;
  documents: number;
  /**
   * Links by the fact type of the memory they start from and their kind: `entity` (a memory
   * mentions an entity), `supports` / `contradicts` (an observation and a memory behind it).
   */
  links: { fact_type: string; link_type: string; n: number }[];
  /** Observations consolidation wrote (a client's own `observation` memories are not counted). */
  consolidatedObservations: number;
  /** When consolidation last moved on, null before its first run. */
  lastConsolidatedAt: Date | null;
  /** Memories consolidation has not read yet (its own observations aside). */
  pendingConsolidation: number;
  lastMemoryAt: Date | null;
}

/** The timestamp a memory is counted by in a time series (null ones count by `created_at`). */
export type TimeField = 'created_at' | 'mentioned_at' | 'occurred_start';
const TIME_FIELDS: Record<TimeField, string> = {
  created_at: 'm.created_at',
  mentioned_at: 'coalesce(m.mentioned_at, m.created_at)',
  occurred_start: 'coalesce(m.occurred_start, m.created_at)',
};

/** Counts over a bank's data: statistics, a time series of memories, tags with their use. */
export interface StatsStore {
  bankStats(projectId: string, bankId: string): Promise<BankStatsRecord>;
  /**
   * Memories whose `field` falls in [from, to), counted by fact type in buckets of `stepSeconds`
   * (aligned on the Unix epoch, so UTC days for 86,400); `bucket` is each bucket's start.
   */
  memoryTimeseries(
    projectId: string,
    bankId: string,
    q: { field: TimeField; from: Date; to: Date; stepSeconds: number },
  ): Promise<{ bucket: Date; type: string; n: number }[]>;
  /**
   * The distinct tags of the bank's memories with how many memories carry each, most used first
   * (then by tag); `like`, a LIKE pattern matched in any case, keeps some. `total` counts every
   * matching tag.
   */
  tagCounts(
    projectId: string,
    bankId: string,
    q: { like?: string; source?: 'memories' | 'mental_models'; limit: number; offset: number },
  ): Promise<{ items: { tag: string; count: number }[]; total: number }>;
}

export function statsQueries(db: Db): StatsStore {
  return {
    async bankStats(projectId, bankId) {
      const args = [projectId, bankId];
      const types = await db.query<{ type: string; n: number; last: Date }>(
        `SELECT type, count(*)::int AS n, max(created_at) AS last FROM memories
         WHERE project_id = $1 AND bank_id = $2 GROUP BY type`,
        args,
      );
      const links = await db.query<{ fact_type: string; link_type: string; n: number }>(
        `SELECT m.type AS fact_type, 'entity' AS link_type, count(*)::int AS n
           FROM memory_entities me JOIN memories m
             ON m.project_id = me.project_id AND m.bank_id = me.bank_id AND m.id = me.memory_id
          WHERE me.project_id = $1 AND me.bank_id = $2 GROUP BY m.type
         UNION ALL
         SELECT 'observation' AS fact_type, os.relation AS link_type, count(*)::int AS n
           FROM observation_sources os WHERE os.project_id = $1 AND os.bank_id = $2 GROUP BY os.relation`,
        args,
      );
      const [row] = await db.query<{
        documents: number;
        observations: number;
        last_consolidated_at: Date | null;
        pending: number;
      }>(
        `SELECT
           (SELECT count(*)::int FROM documents d WHERE d.project_id = $1 AND d.bank_id = $2) AS documents,
           (SELECT count(*)::int FROM observations o WHERE o.project_id = $1 AND o.bank_id = $2) AS observations,
           (SELECT c.updated_at FROM consolidation_state c WHERE c.project_id = $1 AND c.bank_id = $2)
             AS last_consolidated_at,
           (SELECT count(*)::int FROM memories m
             WHERE m.project_id = $1 AND m.bank_id = $2
               AND m.seq > coalesce((SELECT c.last_seq FROM consolidation_state c
                                      WHERE c.project_id = $1 AND c.bank_id = $2), 0)
               AND NOT EXISTS (SELECT 1 FROM observations o
                                WHERE o.project_id = $1 AND o.bank_id = $2 AND o.id = m.id)) AS pending`,
        args,
      );
      const last = types.reduce<Date | null>((a, t) => (a === null || t.last > a ? t.last : a), null);
      return {
        memoriesByType: Object.fromEntries(types.map((t) => [t.type, t.n])),
        documents: row!.documents,
        links,
        consolidatedObservations: row!.observations,
        lastConsolidatedAt: row!.last_consolidated_at,
        pendingConsolidation: row!.pending,
        lastMemoryAt: last,
      };
    },

    async memoryTimeseries(projectId, bankId, q) {
      const at = TIME_FIELDS[q.field];
      const rows = await db.query<{ bucket: number; type: string; n: number }>(
        `SELECT floor(extract(epoch FROM ${at}) / $3)::float8 * $3 AS bucket, m.type, count(*)::int AS n
           FROM memories m
          WHERE m.project_id = $1 AND m.bank_id = $2 AND ${at} >= $4 AND ${at} < $5
          GROUP BY 1, 2`,
        [projectId, bankId, q.stepSeconds, q.from, q.to],
      );
      return rows.map((r) => ({ bucket: new Date(Number(r.bucket) * 1000), type: r.type, n: r.n }));
    },

    async tagCounts(projectId, bankId, q) {
      const params: unknown[] = [projectId, bankId];
      let match = '';
      if (q.like !== undefined) {
        params.push(q.like);
        match = ` AND t.tag ILIKE $${params.length}`;
      }
      const table = q.source === 'mental_models' ? 'mental_models' : 'memories';
      const from = `FROM ${table} m CROSS JOIN LATERAL unnest(m.tags) AS t(tag)
        WHERE m.project_id = $1 AND m.bank_id = $2${match}`;
      const items = await db.query<{ tag: string; count: number }>(
        `SELECT t.tag, count(*)::int AS count ${from}
         GROUP BY t.tag ORDER BY count DESC, t.tag COLLATE "C" LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
        [...params, q.limit, q.offset],
      );
      const total = await db.query<{ n: number }>(`SELECT count(DISTINCT t.tag)::int AS n ${from}`, params);
      return { items, total: total[0]!.n };
    },
  };
}
