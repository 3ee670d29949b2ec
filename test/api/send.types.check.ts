/**
 * Type test, compiled by `tsc --noEmit` (`npm run check`) and never run: a handler's `send()`
 * is checked against the response schema its route declares, so a body that does not match the
 * contract is a compile error. Each `@ts-expect-error` fails the build if the line below it
 * ever compiles; the lines without one must compile.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { ok } from '../../src/api/routes/openapi.js';
import { router, send } from '../../src/api/routes/router.js';
import { DeletedDirective } from '../../src/contract/directives.js';
import { RecallResponse } from '../../src/contract/memories.js';

const deleted = createRoute({ method: 'delete', path: '/m/{id}', responses: ok(DeletedDirective) });
const recalled = createRoute({ method: 'post', path: '/recall', responses: ok(RecallResponse) });
const created = createRoute({
  method: 'post',
  path: '/things',
  responses: ok(z.object({ id: z.string(), note: z.string().optional() }), 'Created', 201),
});

const scores = { final: 1, semantic: 1, keyword: 0, graph: 0, temporal: 0, reranker: 1 };
const memory = {
  id: 'm1',
  bank_id: 'b',
  type: 'world' as const,
  text: 't',
  context: null,
  occurred_start: null,
  occurred_end: null,
  mentioned_at: new Date(),
  entities: ['Alice'],
  tags: ['t'],
  metadata: { anything: ['goes', 1] },
  document_id: null,
  chunk_id: null,
  created_at: new Date(),
  state: 'valid' as const,
  invalidation_reason: null,
  edited_at: null,
};
const usage = { tokens_used: 1, max_tokens: 10, truncated: false, org_blended: false };
const misspelt = { tokens_used: 1, max_tokens: 10, truncatd: false, org_blended: false };

export const checks = router()
  // The declared body compiles; a Date is sent as the string the schema declares.
  .openapi(deleted, (c) => send(c, { deleted: true, id: 'm1' }))
  .openapi(recalled, (c) => send(c, { results: [{ ...memory, scores }], usage }))
  .openapi(created, (c) => send(c, { id: 't1', note: 'n' }, 201))
  // @ts-expect-error a misspelt field
  .openapi(deleted, (c) => send(c, { deleted: true, idd: 'm1' }))
  // @ts-expect-error a field of the wrong type
  .openapi(deleted, (c) => send(c, { deleted: true, id: 1 }))
  // @ts-expect-error a literal the schema pins (`deleted: true`)
  .openapi(deleted, (c) => send(c, { deleted: false, id: 'm1' }))
  // @ts-expect-error a field the schema does not declare would reach clients undocumented
  .openapi(deleted, (c) => send(c, { deleted: true, id: 'm1', bank: 'b' }))
  // @ts-expect-error a misspelt optional field
  .openapi(created, (c) => send(c, { id: 't1', notes: 'n' }, 201))
  // @ts-expect-error an undeclared field of an item of a nested array
  .openapi(recalled, (c) => send(c, { results: [{ ...memory, scores, rank: 1 }], usage }))
  // @ts-expect-error a misspelt field of a nested object
  .openapi(recalled, (c) => send(c, { results: [{ ...memory, scores }], usage: misspelt }))
  // @ts-expect-error a status the route does not declare
  .openapi(created, (c) => send(c, { id: 't1' }));
