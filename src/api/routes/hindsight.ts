import { walkFare } from '../../core/budgets.js';
import { createRoute, z } from '@hono/zod-openapi';
import { effectiveConfig } from '../../core/bank-config.js';
import {
  type BankProfile,
  bankForWrite,
  checkConfigUpdates,
  bankProfile,
  requireBank,
  updateConfig,
  updateIdentity,
} from '../../core/banks.js';
import { settingsUpdates } from '../../core/bank-upkeep.js';
import { HindsightBankSettings } from '../../contract/bank-upkeep.js';
import { listMemories } from '../../core/memories.js';
import type { Services } from '../../core/services.js';
import type { Bank } from '../../core/types.js';
import { authOf, guard } from '../auth.js';
import { BankProfile as BankProfileSchema } from '../../contract/banks.js';
import { BankParam, FactTypeSchema } from '../../contract/common.js';
import { jsonBody, ok } from './openapi.js';
import { OffsetQuery } from '../../contract/documents.js';
import { MemoryRecord, StateFilter } from '../../contract/memories.js';
import { router, send, servicesOf } from './router.js';

/**
 * Routes that Hindsight's published client calls beside the spec's: create-or-update a bank
 * (PUT), its profile under `/profile`, and offset-paged memory listing. They reuse core; only
 * the wire shapes differ.
 */

const UpsertBankBody = z
  .object({
    name: z.string().max(256).nullable().optional(),
    mission: z.string().max(4000).nullable().optional(),
    background: z.string().max(4000).nullable().optional(),
    ...HindsightBankSettings,
  })
  .openapi('UpsertBank');

export const HindsightProfile = BankProfileSchema.extend({
  bank_id: z.string(),
  name: z.string(),
  mission: z.string(),
  background: z.string().nullable(),
}).openapi('HindsightBankProfile');

/** The profile with Hindsight's names beside mnemo's. */
export function hindsightProfile(bank: Bank, profile: BankProfile) {
  const mission = profile.mission ?? effectiveConfig(bank.config).reflect_mission ?? '';
  return {
    ...profile,
    bank_id: profile.id,
    name: profile.name ?? profile.id,
    mission,
    background: mission || null,
  };
}

async function upsertBank(
  s: Services,
  projectId: string,
  bankId: string,
  body: z.infer<typeof UpsertBankBody>,
) {
  const updates = settingsUpdates(body);
  // Refused before the bank is created, not after.
  checkConfigUpdates(updates, { masterKeySet: false });
  let bank = await bankForWrite(s, projectId, bankId);
  if (Object.keys(updates).length) await updateConfig(s, bank, updates, { masterKeySet: false });
  const mission = body.reflect_mission ?? body.mission ?? body.background;
  if (body.name !== undefined || mission !== undefined) {
    bank = await updateIdentity(s, bank, {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(mission !== undefined ? { mission } : {}),
    });
  }
  return requireBank(s, projectId, bankId);
}

export const hindsightRoutes = router()
  .openapi(
    createRoute({
      method: 'put',
      path: '/banks/{bank}',
      tags: ['Banks'],
      summary: 'Create or update a bank (identity and config in one call)',
      middleware: [guard('banks.upsert')] as const,
      request: { params: BankParam, ...jsonBody(UpsertBankBody) },
      responses: ok(HindsightProfile),
    }),
    async (c) => {
      const s = servicesOf(c);
      const bank = await upsertBank(s, authOf(c).projectId, c.req.valid('param').bank, c.req.valid('json'));
      return send(c, hindsightProfile(bank, await bankProfile(s, bank)));
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/profile',
      tags: ['Banks'],
      summary: 'Get bank profile (Hindsight path)',
      middleware: [guard('banks.get')] as const,
      request: { params: BankParam },
      responses: ok(HindsightProfile),
    }),
    async (c) => {
      const s = servicesOf(c);
      const bank = await requireBank(s, authOf(c).projectId, c.req.valid('param').bank);
      return send(c, hindsightProfile(bank, await bankProfile(s, bank)));
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/memories/list',
      tags: ['Memories'],
      summary: 'List memories by offset (Hindsight path)',
      middleware: [guard('memories.list')] as const,
      request: {
        params: BankParam,
        query: OffsetQuery.extend({
          type: FactTypeSchema.optional(),
          q: z.string().max(500).optional(),
          document_id: z.string().max(256).optional(),
          state: StateFilter.optional().meta({ description: 'curation state to list (default valid)' }),
        }),
      },
      responses: ok(
        z.object({
          items: z.array(MemoryRecord),
          total: z.number().int(),
          limit: z.number().int(),
          offset: z.number().int(),
        }),
      ),
    }),
    async (c) => {
      const s = servicesOf(c);
      const { projectId } = authOf(c);
      const { bank } = c.req.valid('param');
      const q = c.req.valid('query');
      const limit = q.limit ?? 100;
      const offset = q.offset ?? 0;
      const filter = {
        types: q.type ? [q.type] : undefined,
        q: q.q,
        documentId: q.document_id,
        // Hindsight's listing hides invalidated memories unless asked.
        state: q.state ?? 'valid',
      };
      const page = await listMemories(s, projectId, bank, filter, { limit, offset });
      const total = await s.store.countMemories(projectId, bank, filter, walkFare(s, projectId));
      return send(c, { items: page.items, total, limit, offset });
    },
  );
