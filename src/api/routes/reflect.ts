import { createRoute, z } from '@hono/zod-openapi';
import { settingsUpdates } from '../../core/bank-upkeep.js';
import { bankProfile, requireBank, updateConfig, updateIdentity } from '../../core/banks.js';
import { requestConsolidation } from '../../core/consolidate/schedule.js';
import { operationView } from '../../core/operations.js';
import { reflect } from '../../core/reflect/reflect.js';
import { authOf, guard } from '../auth.js';
import { BankProfile } from '../../contract/banks.js';
import { BankParam } from '../../contract/common.js';
import { errorResponse, jsonBody, ok } from './openapi.js';
import { ConsolidateResponse, PatchBankBody, ReflectBody, ReflectResponse } from '../../contract/reflect.js';
import { inBank, router, send, servicesOf } from './router.js';

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
    async (c) => send(c, await reflect(...inBank(c), c.req.valid('json'))),
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
      const queued = await requestConsolidation(...inBank(c));
      return send(c, { ...queued, operation: operationView(queued.operation) });
    },
  )
  .openapi(
    createRoute({
      method: 'patch',
      path: '/banks/{bank}',
      tags: ['Banks'],
      summary: 'Set the bank name and mission (and settings)',
      description:
        'Reflect introduces itself with the name and follows the mission (`background`, `reflect_mission`: Hindsight’s names). Null or blank clears a field. Hindsight’s settings (`disposition`, `retain_*`, `enable_*`, …) update the config; a bad one is a 400 and nothing changes.',
      middleware: [guard('banks.identity.update')] as const,
      request: { params: BankParam, ...jsonBody(PatchBankBody) },
      responses: ok(
        BankProfile.extend({ bank_id: z.string().meta({ description: 'Same as id (Hindsight’s)' }) }),
      ),
    }),
    async (c) => {
      const s = servicesOf(c);
      const b = c.req.valid('json');
      let bank = await requireBank(s, authOf(c).projectId, c.req.valid('param').bank);
      const settings = settingsUpdates(b);
      if (Object.keys(settings).length) {
        await updateConfig(s, bank, settings, { masterKeySet: !!c.get('config').masterKey });
        bank = await requireBank(s, bank.project_id, bank.id);
      }
      const mission = b.mission !== undefined ? b.mission : (b.reflect_mission ?? b.background);
      const updated = await updateIdentity(s, bank, { name: cleared(b.name), mission: cleared(mission) });
      const profile = await bankProfile(s, updated);
      return send(c, { ...profile, bank_id: profile.id });
    },
  );
