import { breathe } from '../breathe.js';
import type { Db } from '../db.js';
import { BY_SEQ } from './memories.js';
import { countRows, groupRows, type Listing, type PayHops } from './offset-walk.js';

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
  /** Walked in bounded hops, each past a walk's first paid through `pay` before it runs. */
  bankStats(projectId: string, bankId: string, pay?: PayHops): Promise<BankStatsRecord>;
  /**
   * Memories whose `field` falls in [from, to), counted by fact type in buckets of `stepSeconds`
   * (aligned on the Unix epoch, so UTC days for 86,400); `bucket` is each bucket's start.
   */
  memoryTimeseries(
    projectId: string,
    bankId: string,
    q: { field: TimeField; from: Date; to: Date; stepSeconds: number },
    pay?: PayHops,
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
    pay?: PayHops,
  ): Promise<{ items: { tag: string; count: number }[]; total: number }>;
}

/** A bank's memories, newest first: the walk of its whole-bank aggregates. */
const memoriesOf = (projectId: string, bankId: string, more: unknown[] = []): Listing => ({
  from: 'memories m',
  where: 'm.project_id = $1 AND m.bank_id = $2',
  params: [projectId, bankId, ...more],
  order: BY_SEQ,
});

/** Text in PostgreSQL's "C" collation order (UTF-8 bytes), as the tag listing sorts. */
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * Every aggregate here reads the bank in hops of at most SKIP_PER_STATEMENT rows (`groupRows`,
 * `countRows`), each hop past a walk's first paid through `pay` before it runs (issue 18).
 */
export function statsQueries(db: Db): StatsStore {
  return {
    async bankStats(projectId, bankId, pay) {
      const [state] = await db.query<{ last_seq: string; updated_at: Date }>(
        `SELECT last_seq::text AS last_seq, updated_at FROM consolidation_state
          WHERE project_id = $1 AND bank_id = $2`,
        [projectId, bankId],
      );
      const types = await groupRows(
        db,
        memoriesOf(projectId, bankId, [state?.last_seq ?? '0']),
        {
          group: { type: 'm.type' },
          aggregates: {
            n: { fn: 'count' },
            last: { fn: 'max', expr: 'm.created_at' },
            pending: {
              fn: 'countIf',
              expr: `m.seq > $3::bigint AND NOT EXISTS (SELECT 1 FROM observations o
                       WHERE o.project_id = $1 AND o.bank_id = $2 AND o.id = m.id)`,
            },
          },
        },
        pay,
      );
      const args = [projectId, bankId];
      // A turn of the event loop between two walks too, as between two hops of one.
      await breathe();
      const mentions = await groupRows(
        db,
        {
          // `OFFSET 0`: a lookup of the hop's own memories, not a join starting at the bank's first.
          from: `memory_entities me CROSS JOIN LATERAL (
                   SELECT type FROM memories
                    WHERE project_id = me.project_id AND bank_id = me.bank_id AND id = me.memory_id OFFSET 0) m`,
          where: 'me.project_id = $1 AND me.bank_id = $2',
          params: args,
          order: [
            { expr: 'me.memory_id', type: 'uuid' },
            { expr: 'me.entity_id', type: 'uuid' },
          ],
        },
        { group: { type: 'm.type' }, aggregates: { n: { fn: 'count' } } },
        pay,
      );
      await breathe();
      const sources = await groupRows(
        db,
        {
          from: 'observation_sources os',
          where: 'os.project_id = $1 AND os.bank_id = $2',
          params: args,
          order: [
            { expr: 'os.observation_id', type: 'uuid' },
            { expr: 'os.memory_id', type: 'uuid' },
          ],
        },
        { group: { relation: 'os.relation' }, aggregates: { n: { fn: 'count' } } },
        pay,
      );
      const byId = (table: string, type: string): Listing => ({
        from: table,
        where: 'project_id = $1 AND bank_id = $2',
        params: args,
        order: [{ expr: 'id', type }],
      });
      await breathe();
      const documents = await countRows(db, byId('documents', 'text'), null, pay);
      await breathe();
      const observations = await countRows(db, byId('observations', 'uuid'), null, pay);
      const last = types.reduce<Date | null>(
        (a, t) => (a === null || (t.last as Date) > a ? (t.last as Date) : a),
        null,
      );
      return {
        memoriesByType: Object.fromEntries(types.map((t) => [t.type as string, t.n as number])),
        documents,
        links: [
          ...mentions.map((l) => ({ fact_type: l.type as string, link_type: 'entity', n: l.n as number })),
          ...sources.map((l) => ({
            fact_type: 'observation',
            link_type: l.relation as string,
            n: l.n as number,
          })),
        ],
        consolidatedObservations: observations,
        lastConsolidatedAt: state?.updated_at ?? null,
        pendingConsolidation: types.reduce((a, t) => a + (t.pending as number), 0),
        lastMemoryAt: last,
      };
    },

    async memoryTimeseries(projectId, bankId, q, pay) {
      const at = TIME_FIELDS[q.field];
      const rows = await groupRows(
        db,
        memoriesOf(projectId, bankId, [q.stepSeconds, q.from, q.to]),
        {
          group: { bucket: `floor(extract(epoch FROM ${at}) / $3)::float8 * $3`, type: 'm.type' },
          aggregates: { n: { fn: 'count' } },
          filter: () => `${at} >= $4 AND ${at} < $5`,
        },
        pay,
      );
      return rows.map((r) => ({
        bucket: new Date(Number(r.bucket) * 1000),
        type: r.type as string,
        n: r.n as number,
      }));
    },

    async tagCounts(projectId, bankId, q, pay) {
      const params: unknown[] = [projectId, bankId];
      let match = '';
      if (q.like !== undefined) {
        params.push(q.like);
        match = `t.tag ILIKE $${params.length}`;
      }
      if (q.source === 'mental_models') {
        // At most MAX_MENTAL_MODELS a bank: one statement reads them all.
        const from = `FROM mental_models m CROSS JOIN LATERAL unnest(m.tags) AS t(tag)
          WHERE m.project_id = $1 AND m.bank_id = $2${match ? ` AND ${match}` : ''}`;
        const items = await db.query<{ tag: string; count: number }>(
          `SELECT t.tag, count(*)::int AS count ${from}
           GROUP BY t.tag ORDER BY count DESC, t.tag COLLATE "C" LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
          [...params, q.limit, q.offset],
        );
        const total = await db.query<{ n: number }>(`SELECT count(DISTINCT t.tag)::int AS n ${from}`, params);
        return { items, total: total[0]!.n };
      }
      // Each tag of each memory is a row of the walk, in (seq, place in its tags) order.
      const tags = await groupRows(
        db,
        {
          from: 'memories m CROSS JOIN LATERAL unnest(m.tags) WITH ORDINALITY AS t(tag, ord)',
          where: 'm.project_id = $1 AND m.bank_id = $2',
          params,
          order: [...BY_SEQ, { expr: 't.ord', type: 'bigint', desc: true }],
        },
        {
          group: { tag: 't.tag' },
          aggregates: { count: { fn: 'count' } },
          filter: match ? () => match : undefined,
        },
        pay,
      );
      const all = tags
        .map((t) => ({ tag: t.tag as string, count: t.count as number }))
        .sort((a, b) => b.count - a.count || byBytes(a.tag, b.tag));
      return { items: all.slice(q.offset, q.offset + q.limit), total: all.length };
    },
  };
}
