import { z } from 'zod';
import { named } from './names.js';
import { DateOut, IsoDate } from './common.js';
import { TIMESERIES_PERIODS, type TimeseriesPeriod } from './stats.js';

/** Entries a page may skip by `offset`; older ones are reached by `cursor`. */
export const MAX_LEDGER_OFFSET = 10_000;
/** Entries of a bank's audit log that `total` counts at most. */
export const AUDIT_COUNT_CAP = 10_000;

const Offset = z.coerce
  .number()
  .int()
  .min(0)
  .max(MAX_LEDGER_OFFSET)
  .optional()
  .meta({ description: `default 0, at most ${MAX_LEDGER_OFFSET}; page further with \`cursor\`` });

/** The paging of Hindsight's ledgers (limit, offset) and mnemo's cursor. */
export const LedgerPage = {
  limit: z.coerce.number().int().min(1).max(500).optional().meta({ description: 'default 50' }),
  offset: Offset,
  cursor: z.string().max(200).optional().meta({
    description: '`next_cursor` of the previous page: entries older than it (`offset` is then ignored)',
  }),
  start_date: IsoDate.optional().meta({ description: 'from this time (inclusive)' }),
  end_date: IsoDate.optional().meta({ description: 'until this time (exclusive)' }),
};

export const StatsPeriod = z
  .enum(Object.keys(TIMESERIES_PERIODS) as [TimeseriesPeriod, ...TimeseriesPeriod[]])
  .optional()
  .meta({ description: 'default 7d' });

export const AuditLogQuery = z.object({
  action: z
    .string()
    .max(128)
    .optional()
    .meta({ description: 'an action of the catalogue (`memories.retain`)' }),
  transport: z.enum(['http', 'mcp', 'system']).optional(),
  ...LedgerPage,
});

export const AuditLogEntry = z
  .object({
    id: z.string(),
    action: z.string(),
    transport: z.enum(['http', 'mcp', 'system']),
    bank_id: z.string().nullable(),
    started_at: DateOut.nullable(),
    ended_at: DateOut.nullable().meta({ description: 'the time the entry was written (as `started_at`)' }),
    duration_ms: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'null: mnemo does not time audited requests' }),
    request: z
      .record(z.string(), z.unknown())
      .nullable()
      .meta({ description: 'null: no request body is kept' }),
    response: z
      .record(z.string(), z.unknown())
      .nullable()
      .meta({ description: 'null: no response body is kept' }),
    metadata: z.record(z.string(), z.unknown()),
    at: DateOut,
    actor: z.object({ type: z.string(), key_id: z.string().nullable() }),
    space_id: z.string().nullable(),
    status: z.number().int(),
    request_id: z.string(),
    count: z.number().int(),
  })
  .register(named, { name: 'AuditLogEntry' });

export const AuditLogList = z
  .object({
    bank_id: z.string(),
    total: z
      .number()
      .int()
      .meta({ description: `matching entries, at most ${AUDIT_COUNT_CAP}` }),
    total_capped: z.boolean().meta({ description: `more than ${AUDIT_COUNT_CAP} entries match` }),
    limit: z.number().int(),
    offset: z.number().int(),
    items: z.array(AuditLogEntry),
    next_cursor: z.string().nullable(),
  })
  .register(named, { name: 'AuditLogList' });

export const AuditLogStatsQuery = z.object({ action: z.string().max(128).optional(), period: StatsPeriod });

export const AuditLogStats = z
  .object({
    bank_id: z.string(),
    period: z.string(),
    trunc: z.enum(['minute', 'hour', 'day']),
    start: DateOut.meta({ description: 'the first bucket’s start' }),
    buckets: z
      .array(
        z.object({
          time: DateOut,
          actions: z.record(z.string(), z.number().int()),
          total: z.number().int(),
        }),
      )
      .meta({ description: 'every bucket of the period, oldest first' }),
  })
  .register(named, { name: 'AuditLogStats' });
