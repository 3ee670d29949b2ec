import { z } from '@hono/zod-openapi';
import { FACT_TYPES } from '../../text/fact-type.js';
import { SCOPES } from '../../core/types.js';

export const ErrorBody = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: 'validation_error' }),
      message: z.string(),
      details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
      request_id: z.string(),
      required_scope: z.string().optional(),
    }),
  })
  .openapi('Error');

export const FactTypeSchema = z.enum(FACT_TYPES).openapi('FactType');
export const ScopeSchema = z.enum(SCOPES).openapi('Scope');
export const TagsMatchSchema = z.enum(['any', 'all', 'any_strict', 'all_strict', 'exact']).openapi('TagsMatch');
export const BudgetSchema = z.enum(['low', 'mid', 'high']).openapi('Budget');

/** An ISO 8601 date-time in requests; parsed by the route into a Date. */
export const IsoDate = z
  .string()
  .max(64)
  .refine((v) => !Number.isNaN(Date.parse(v)), 'must be an ISO 8601 date-time')
  .openapi({ format: 'date-time', example: '2024-05-08T13:56:00Z' });

/** Date-times in responses (serialised from Date). */
export const DateOut = z.string().openapi({ format: 'date-time' });

export const Tags = z.array(z.string().min(1).max(128)).max(64);
/** Largest accepted metadata object, as serialised JSON (UTF-8 bytes). */
export const MAX_METADATA_BYTES = 64 * 1024;
/** Deepest accepted nesting of objects and arrays in metadata (`{"a": 1}` is depth 1). */
export const MAX_METADATA_DEPTH = 10;

/** True when `v` nests objects or arrays deeper than `room` levels; stops as soon as it knows. */
function deeperThan(v: unknown, room: number): boolean {
  if (v === null || typeof v !== 'object') return false;
  if (room === 0) return true;
  return Object.values(v).some((x) => deeperThan(x, room - 1));
}

export const Metadata = z
  .record(z.string(), z.unknown())
  .superRefine((m, ctx) => {
    if (deeperThan(m, MAX_METADATA_DEPTH)) {
      ctx.addIssue({ code: 'custom', message: `metadata nests deeper than ${MAX_METADATA_DEPTH} levels` });
    } else if (Buffer.byteLength(JSON.stringify(m)) > MAX_METADATA_BYTES) {
      ctx.addIssue({ code: 'custom', message: `metadata is larger than ${MAX_METADATA_BYTES} bytes as JSON` });
    }
  })
  .openapi({ description: `at most ${MAX_METADATA_BYTES} bytes as JSON, nested at most ${MAX_METADATA_DEPTH} levels` });

export const BankParam = z.object({
  bank: z.string().openapi({ param: { name: 'bank', in: 'path' }, example: 'alice%40example.com' }),
});
export const SpaceParam = z.object({ space: z.string().openapi({ param: { name: 'space', in: 'path' } }) });

export const PageQuery = {
  limit: z.coerce.number().int().min(1).max(500).optional(),
  cursor: z.string().max(200).optional(),
};

export const errorResponses = {
  400: { description: 'Invalid request', content: { 'application/json': { schema: ErrorBody } } },
  401: { description: 'Missing or invalid credentials', content: { 'application/json': { schema: ErrorBody } } },
  403: { description: 'Key lacks the required scope', content: { 'application/json': { schema: ErrorBody } } },
  404: { description: 'Not found', content: { 'application/json': { schema: ErrorBody } } },
} as const;

/** A 200 JSON response with its schema, plus the common error responses. */
export function ok<T extends z.ZodType>(schema: T, description = 'OK', status: 200 | 201 = 200) {
  return {
    [status]: { description, content: { 'application/json': { schema } } },
    ...errorResponses,
  } as const;
}

export const jsonBody = <T extends z.ZodType>(schema: T) => ({
  body: { content: { 'application/json': { schema } }, required: true },
});

export const toDate = (v: string | undefined) => (v === undefined ? undefined : new Date(v));
