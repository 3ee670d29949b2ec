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

/** OpenAPI plumbing of the routes: the common error responses and JSON bodies. */
export const errorResponses = {
  400: { description: 'Invalid request', content: { 'application/json': { schema: ErrorBody } } },
  401: {
    description: 'Missing or invalid credentials',
    content: { 'application/json': { schema: ErrorBody } },
  },
  403: {
    description: 'Key lacks the required scope',
    content: { 'application/json': { schema: ErrorBody } },
  },
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
