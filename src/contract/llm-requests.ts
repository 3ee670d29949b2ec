import { z } from 'zod';
import { named } from './names.js';
import { DateOut } from './common.js';
import { LedgerPage, StatsPeriod } from './audit-logs.js';

const Word = z.string().max(128).optional();

export const LlmRequestQuery = z.object({
  status: z.enum(['success', 'error']).optional(),
  operation: Word.meta({ description: 'retain, reflect, consolidation or probe' }),
  scope: Word.meta({
    description: 'the step: extraction, dry_run_extraction, answer, structured_answer, plan, health',
  }),
  provider: Word,
  trace_id: Word.meta({ description: 'the calls of one Retain, Reflect or consolidation slice' }),
  ...LedgerPage,
});

export const LlmRequestEntry = z
  .object({
    id: z.string(),
    bank_id: z.string().nullable(),
    operation: z.string().nullable(),
    scope: z.string().nullable(),
    trace_id: z.string().nullable(),
    span_id: z.string().nullable(),
    parent_span_id: z.string().nullable(),
    provider: z.string().nullable(),
    model: z.string().nullable(),
    status: z.enum(['success', 'error']),
    started_at: DateOut.nullable(),
    ended_at: DateOut.nullable(),
    duration_ms: z.number().int().nullable(),
    input_tokens: z.number().int().nullable(),
    output_tokens: z.number().int().nullable(),
    cached_tokens: z.number().int().nullable().meta({ description: 'null: not reported' }),
    total_tokens: z.number().int().nullable(),
    input: z.null().meta({ description: 'always null: no prompt is kept' }),
    output: z.null().meta({ description: 'always null: no answer is kept' }),
    error: z.string().nullable().meta({
      description:
        'the failure’s kind (timeout, rate_limited, provider_error, bad_response, network, aborted)',
    }),
    llm_info: z.record(z.string(), z.unknown()),
    metadata: z.record(z.string(), z.unknown()),
  })
  .register(named, { name: 'LlmRequestEntry' });

export const LlmRequestList = z
  .object({
    bank_id: z.string(),
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
    items: z.array(LlmRequestEntry),
    next_cursor: z.string().nullable(),
  })
  .register(named, { name: 'LlmRequestList' });

export const LlmRequestStatsQuery = z.object({ operation: Word, period: StatsPeriod });

const TokenSums = z.object({
  input: z.number().int(),
  output: z.number().int(),
  cached: z.number().int(),
  total: z.number().int(),
});

export const LlmRequestStats = z
  .object({
    bank_id: z.string(),
    period: z.string(),
    trunc: z.enum(['minute', 'hour', 'day']),
    start: DateOut,
    buckets: z
      .array(
        z.object({
          time: DateOut,
          statuses: z.record(z.string(), z.number().int()),
          total: z.number().int(),
          tokens: TokenSums,
        }),
      )
      .meta({ description: 'every bucket of the period, oldest first' }),
    totals: z
      .array(
        z.object({
          operation: z.string(),
          scope: z.string(),
          status: z.enum(['success', 'error']),
          calls: z.number().int(),
          input_tokens: z.number().int(),
          output_tokens: z.number().int(),
          total_tokens: z.number().int(),
          avg_duration_ms: z.number().int(),
        }),
      )
      .meta({
        description: 'the period’s calls by purpose (operation and scope) and outcome, most calls first',
      }),
  })
  .register(named, { name: 'LlmRequestStats' });
