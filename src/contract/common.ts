import { z } from 'zod';
import { named } from './names.js';
import { FACT_TYPES, SCOPES } from './vocabulary.js';

export const ErrorBody = z
  .object({
    error: z.object({
      code: z.string().meta({ example: 'validation_error' }),
      message: z.string(),
      details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
      request_id: z.string(),
      required_scope: z.string().optional(),
    }),
  })
  .register(named, { name: 'Error' });

export const FactTypeSchema = z.enum(FACT_TYPES).register(named, { name: 'FactType' });
export const ScopeSchema = z.enum(SCOPES).register(named, { name: 'Scope' });
export const TagsMatchSchema = z
  .enum(['any', 'all', 'any_strict', 'all_strict', 'exact'])
  .register(named, { name: 'TagsMatch' });
export const BudgetSchema = z.enum(['low', 'mid', 'high']).register(named, { name: 'Budget' });

/** An ISO 8601 date-time in requests; parsed by the route into a Date. */
export const IsoDate = z
  .string()
  .max(64)
  .refine((v) => !Number.isNaN(Date.parse(v)), 'must be an ISO 8601 date-time')
  .meta({ format: 'date-time', example: '2024-05-08T13:56:00Z' });

/** Date-times in responses (serialised from Date). */
export const DateOut = z.string().meta({ format: 'date-time' });

export const Tags = z.array(z.string().min(1).max(128)).max(64);
/**
 * A filter of fact types, each at most once: a longer list filters nothing more, and a million
 * entries (a 9 MB body) held the embedded engine for 13 s.
 */
export const FactTypes = z
  .array(FactTypeSchema)
  .max(FACT_TYPES.length)
  .meta({ description: `at most ${FACT_TYPES.length} (each fact type once)` });
/** Largest accepted metadata object, as serialised JSON (UTF-8 bytes). */
export const MAX_METADATA_BYTES = 64 * 1024;
/** Deepest accepted nesting of objects and arrays in metadata (`{"a": 1}` is depth 1). */
export const MAX_METADATA_DEPTH = 10;

/** True when `v` nests objects or arrays deeper than `room` levels; stops as soon as it knows. */
export function deeperThan(v: unknown, room: number): boolean {
  if (v === null || typeof v !== 'object') return false;
  if (room === 0) return true;
  return Object.values(v).some((x) => deeperThan(x, room - 1));
}

export const Metadata = z
  .record(z.string(), z.unknown())
  .superRefine((m, ctx) => {
    if (deeperThan(m, MAX_METADATA_DEPTH)) {
      ctx.addIssue({ code: 'custom', message: `metadata nests deeper than ${MAX_METADATA_DEPTH} levels` });
    } else if (new TextEncoder().encode(JSON.stringify(m)).length > MAX_METADATA_BYTES) {
      ctx.addIssue({
        code: 'custom',
        message: `metadata is larger than ${MAX_METADATA_BYTES} bytes as JSON`,
      });
    }
  })
  .meta({
    description: `at most ${MAX_METADATA_BYTES} bytes as JSON, nested at most ${MAX_METADATA_DEPTH} levels`,
  });

export const BankParam = z.object({
  bank: z.string().meta({ param: { name: 'bank', in: 'path' }, example: 'alice%40example.com' }),
});
export const SpaceParam = z.object({ space: z.string().meta({ param: { name: 'space', in: 'path' } }) });

export const PageQuery = {
  limit: z.coerce.number().int().min(1).max(500).optional(),
  cursor: z.string().max(200).optional(),
};

export const toDate = (v: string | undefined) => (v === undefined ? undefined : new Date(v));
