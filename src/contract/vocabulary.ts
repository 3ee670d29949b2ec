/**
 * The words of the wire contract that are not schemas: fact types, scopes and error codes.
 * Core, the routes, MCP, the CLI and the SDK all take them from here.
 */

/** Kinds of memory, in the spec's order (a tuple, so schema enums are built from it). */
export const FACT_TYPES = [
  'world',
  'experience',
  'observation',
  'procedure',
  'reasoning',
  'preference',
  'correction',
  'profile',
] as const;
export type FactType = (typeof FACT_TYPES)[number];

/** What an API key may do. */
export const SCOPES = ['retain', 'recall', 'graph:read', 'mcp', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** The stable error codes of the API and their HTTP status (`error.code` in every error body). */
export const ERROR_STATUS = {
  validation_error: 400,
  query_too_long: 400,
  master_key_missing: 400,
  unauthenticated: 401,
  forbidden: 403,
  host_not_allowed: 403,
  origin_not_allowed: 403,
  not_found: 404,
  gone: 410,
  conflict: 409,
  idempotency_mismatch: 409,
  already_done: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  llm_required: 422,
  rate_limited: 429,
  internal: 500,
  llm_error: 502,
  unavailable: 503,
} as const;
export type ErrorCode = keyof typeof ERROR_STATUS;
