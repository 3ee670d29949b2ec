import { createRoute } from '@hono/zod-openapi';
import { bankProfile, requireBank, updateIdentity } from '../../core/banks.js';
import { requestConsolidation } from '../../core/consolidate/schedule.js';
import { operationView } from '../../core/operations.js';
import { reflect } from '../../core/reflect/reflect.js';
import { authOf, guard } from '../auth.js';
import { BankProfile } from '../../contract/banks.js';
import { BankParam } from '../../contract/common.js';
import { errorResponse, jsonBody, ok } from './openapi.js';
import { ConsolidateResponse, IdentityBody, ReflectBody, ReflectResponse } from '../../contract/reflect.js';
import { router, send, servicesOf } from './router.js';

/** Blank text clears a field, like null. */
const cleared = (v: string | null | undefined) => (v === undefined ? undefined : v?.trim() || null);

/** Reflect, the consolidation that feeds it observations, and the bank identity it speaks with. */
export const reflectRoutes = router()
  .openapi(
    createRoute({
      method: 'post',
      path: '/banks/{bank}/reflect',
      tags: ['Reflect'],
      summary: 'Reflect: a written answer from the bank',
      description:
        "Shaped by the bank's identity, disposition and directives. Without a language model the answer is extractive (`mode: extractive`) and `response_schema` is a 422.",
      middleware: [guard('reflect')] as const,
      request: { params: BankParam, ...jsonBody(ReflectBody) },
      responses: {
        ...ok(ReflectResponse),
        422: errorResponse('`response_schema` without a language model (`llm_required`)'),
        502: errorResponse('The language model failed or answered outside `response_schema` (`llm_error`)'),
      },
    }),
    async (c) =>
      send(
        c,
        await reflect(servicesOf(c), authOf(c).projectId, c.req.valid('param').bank, c.req.valid('json')),
      ),
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/banks/{bank}/consolidate',
      tags: ['Reflect'],
      summary: 'Consolidate memories into observations',
      description:
        'Queues a consolidation of the memories retained since the last one (Retain queues one too). A consolidation already waiting is returned instead of a second (`deduplicated: true`).',
      middleware: [guard('observations.consolidate')] as const,
      request: { params: BankParam },
      responses: ok(ConsolidateResponse),
    }),
    async (c) => {
      const queued = await requestConsolidation(
        servicesOf(c),
        authOf(c).projectId,
        c.req.valid('param').bank,
      );
      return send(c, { ...queued, operation: operationView(queued.operation) });
    },
  )
  .openapi(
    createRoute({
      method: 'patch',
      path: '/banks/{bank}',
      tags: ['Banks'],
      summary: 'Set the bank name and mission',
      description:
        'Reflect introduces itself with the name and follows the mission (background). Null or blank clears a field.',
      middleware: [guard('banks.identity.update')] as const,
      request: { params: BankParam, ...jsonBody(IdentityBody) },
      responses: ok(BankProfile),
    }),
    async (c) => {
      const s = servicesOf(c);
      const b = c.req.valid('json');
      const bank = await requireBank(s, authOf(c).projectId, c.req.valid('param').bank);
      const updated = await updateIdentity(s, bank, {
        name: cleared(b.name),
        mission: cleared(b.mission !== undefined ? b.mission : b.background),
      });
      return send(c, await bankProfile(s, updated));
    },
  );
