import { walkFare } from '../../core/budgets.js';
import { createRoute } from '@hono/zod-openapi';
import { bankProfile, configView, requireBank, updateConfig } from '../../core/banks.js';
import { deleteBank } from '../../core/forget.js';
import { authOf, guard } from '../auth.js';
import {
  BankConfigView,
  BankProfile,
  DeletedBank,
  EntityListPage,
  EntityListQuery,
  PatchConfigBody,
} from '../../contract/banks.js';
import { BankParam } from '../../contract/common.js';
import { jsonBody, ok } from './openapi.js';
import { inBank, router, send, servicesOf } from './router.js';

/** Bank profile, config, entities and deletion (Reflect is in reflect.ts). */
export const bankRoutes = router()
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}',
      tags: ['Banks'],
      summary: 'Get bank profile',
      middleware: [guard('banks.get')] as const,
      request: { params: BankParam },
      responses: ok(BankProfile),
    }),
    async (c) => {
      const s = servicesOf(c);
      const bank = await requireBank(s, authOf(c).projectId, c.req.valid('param').bank);
      return send(c, await bankProfile(s, bank));
    },
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/banks/{bank}',
      tags: ['Banks'],
      summary: 'Delete a bank and all its memories',
      middleware: [guard('banks.delete')] as const,
      request: { params: BankParam },
      responses: ok(DeletedBank),
    }),
    async (c) => send(c, await deleteBank(...inBank(c))),
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/config',
      tags: ['Banks'],
      summary: 'Get bank config',
      middleware: [guard('banks.config.get')] as const,
      request: { params: BankParam },
      responses: ok(BankConfigView),
    }),
    async (c) => {
      const bank = await requireBank(...inBank(c));
      return send(c, configView(bank));
    },
  )
  .openapi(
    createRoute({
      method: 'patch',
      path: '/banks/{bank}/config',
      tags: ['Banks'],
      summary: 'Update bank config',
      description:
        'Unknown keys and bad values are a 400 naming each key; `null` resets a key to its default.',
      middleware: [guard('banks.config.update')] as const,
      request: { params: BankParam, ...jsonBody(PatchConfigBody) },
      responses: ok(BankConfigView),
    }),
    async (c) => {
      const s = servicesOf(c);
      const bank = await requireBank(s, authOf(c).projectId, c.req.valid('param').bank);
      const view = await updateConfig(s, bank, c.req.valid('json').updates, {
        masterKeySet: !!c.get('config').masterKey,
      });
      return send(c, view);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/entities',
      tags: ['Banks'],
      summary: 'List entities',
      description:
        'Most mentioned first, paged by `cursor` or `offset`; `total`, `limit`, `offset` and each `canonical_name` are Hindsight’s.',
      middleware: [guard('entities.list')] as const,
      request: { params: BankParam, query: EntityListQuery },
      responses: ok(EntityListPage),
    }),
    async (c) => {
      const s = servicesOf(c);
      const { projectId } = authOf(c);
      const bank = await requireBank(s, projectId, c.req.valid('param').bank);
      const q = c.req.valid('query');
      const limit = q.limit ?? 50;
      const offset = q.cursor === undefined ? (q.offset ?? 0) : 0;
      const pay = walkFare(s, projectId);
      const page = await s.store.listEntities(projectId, bank.id, { limit, cursor: q.cursor, offset, pay });
      return send(c, {
        items: page.items.map((e) => ({ ...e, canonical_name: e.name })),
        next_cursor: page.next_cursor,
        total: await s.store.countEntities(projectId, bank.id, pay),
        limit,
        offset,
      });
    },
  );
