import { z } from 'zod';
import { named } from './names.js';
import { DateOut } from './common.js';
import { FACT_TYPES, type FactType } from './vocabulary.js';

const counts = z.record(z.string(), z.number().int());

/** `GET /banks/{bank}/stats`: what a bank holds, counted, in Hindsight's names. */
export const BankStatsResponse = z
  .object({
    bank_id: z.string(),
    total_nodes: z.number().int().meta({ description: 'memories, observations included' }),
    total_links: z.number().int().meta({ description: 'entity mentions and observation sources' }),
    total_documents: z.number().int(),
    nodes_by_fact_type: counts,
    links_by_link_type: counts.meta({
      description:
        '`entity`: a memory mentions an entity; `supports` / `contradicts`: an observation and a memory behind it',
    }),
    links_by_fact_type: counts.meta({ description: 'by the fact type of the memory a link starts from' }),
    links_breakdown: z.record(z.string(), counts).meta({ description: 'fact type → link type → count' }),
    pending_operations: z.number().int().meta({ description: 'pending or processing' }),
    failed_operations: z.number().int(),
    operations_by_status: counts,
    last_consolidated_at: DateOut.nullable(),
    last_memory_write_at: DateOut.nullable(),
    pending_consolidation: z.number().int().meta({ description: 'memories consolidation has not read yet' }),
    total_observations: z.number().int(),
  })
  .register(named, { name: 'BankStats' });

/** How far back a time series looks, and the bucket each period is counted in. */
export const TIMESERIES_PERIODS = {
  '1h': { seconds: 3600, trunc: 'minute' },
  '12h': { seconds: 12 * 3600, trunc: 'hour' },
  '1d': { seconds: 86_400, trunc: 'hour' },
  '7d': { seconds: 7 * 86_400, trunc: 'day' },
  '30d': { seconds: 30 * 86_400, trunc: 'day' },
  '90d': { seconds: 90 * 86_400, trunc: 'day' },
} as const;
export type TimeseriesPeriod = keyof typeof TIMESERIES_PERIODS;

export const TimeseriesQuery = z.object({
  period: z
    .enum(Object.keys(TIMESERIES_PERIODS) as [TimeseriesPeriod, ...TimeseriesPeriod[]])
    .optional()
    .meta({ description: 'default 7d' }),
  time_field: z.string().max(64).optional().meta({
    description:
      '`created_at` (ingest time, the default), `mentioned_at` or `occurred_start` (event time; a memory without one counts at `created_at`). Anything else counts by `created_at`.',
  }),
});

/** A count for each fact type. */
const typeCounts = Object.fromEntries(FACT_TYPES.map((t) => [t, z.number().int()])) as Record<
  FactType,
  z.ZodNumber
>;

export const TimeseriesBucket = z
  .object({ time: DateOut.meta({ description: 'the bucket’s start (UTC)' }), ...typeCounts })
  .register(named, { name: 'TimeseriesBucket' });

export const TimeseriesResponse = z
  .object({
    bank_id: z.string(),
    period: z.string(),
    trunc: z.enum(['minute', 'hour', 'day']),
    time_field: z.enum(['created_at', 'mentioned_at', 'occurred_start']),
    buckets: z.array(TimeseriesBucket).meta({ description: 'every bucket of the period, oldest first' }),
  })
  .register(named, { name: 'MemoriesTimeseries' });

export const TagQuery = z.object({
  q: z.string().max(256).optional().meta({
    description:
      'a pattern, `*` standing for any text (`user:*`), matched in any case; without `*`, the whole tag',
  }),
  source: z.enum(['memories', 'mental_models']).optional().meta({
    description: "Where tags are counted: `memories` (default) or the bank's `mental_models`",
  }),
  limit: z.coerce.number().int().min(1).max(1000).optional().meta({ description: 'default 100' }),
  offset: z.coerce.number().int().min(0).max(1_000_000).optional(),
});

export const TagPage = z
  .object({
    items: z.array(
      z.object({
        tag: z.string(),
        count: z.number().int().meta({ description: 'memories (or mental models) with the tag' }),
      }),
    ),
    total: z.number().int().meta({ description: 'distinct matching tags' }),
    limit: z.number().int(),
    offset: z.number().int(),
  })
  .register(named, { name: 'TagPage' });
