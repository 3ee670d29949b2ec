import { zodToOpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';
// The whole contract, so that every schema is named before the loop below runs.
import { ErrorBody, SCHEMA_NAMES } from '../../contract/index.js';

// The contract names its shared schemas; here they become components of /openapi.json, on the
// very instances the routes use (so every use is a `$ref`).
for (const [schema, name] of SCHEMA_NAMES) {
  zodToOpenAPIRegistry.add(schema, {
    ...zodToOpenAPIRegistry.get(schema),
    _internal: { ...zodToOpenAPIRegistry.get(schema)?._internal, refId: name },
  });
}

/** An error status of a route: its description and our JSON error body. */
export const errorResponse = (description: string) =>
  ({ description, content: { 'application/json': { schema: ErrorBody } } }) as const;

/** OpenAPI plumbing of the routes: the common error responses and JSON bodies. */
export const errorResponses = {
  400: errorResponse('Invalid request'),
  401: errorResponse('Missing or invalid credentials'),
  403: errorResponse('Key lacks the required scope'),
  404: errorResponse('Not found'),
} as const;

/** The success response of a route: its status and JSON schema. */
type Success<S extends 200 | 201, T extends z.ZodType> = {
  [K in S]: { description: string; content: { 'application/json': { schema: T } } };
};

/**
 * A 200 (or 201) JSON response with its schema, plus the common error responses. The status
 * stays a literal key, so a handler's body is checked against `schema` at compile time.
 */
export function ok<T extends z.ZodType, S extends 200 | 201 = 200>(
  schema: T,
  description = 'OK',
  status: S = 200 as S,
): Success<S, T> & typeof errorResponses {
  const success = { [status]: { description, content: { 'application/json': { schema } } } } as Success<S, T>;
  return { ...success, ...errorResponses };
}

export const jsonBody = <T extends z.ZodType>(schema: T) => ({
  body: { content: { 'application/json': { schema } }, required: true },
});
