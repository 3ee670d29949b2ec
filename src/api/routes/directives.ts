import { createRoute } from '@hono/zod-openapi';
import {
  createDirective,
  deleteDirective,
  getDirective,
  listDirectives,
  updateDirective,
} from '../../core/directives.js';
import { guard } from '../auth.js';
import { BankParam } from '../../contract/common.js';
import { jsonBody, ok } from './openapi.js';
import {
  CreateDirectiveBody,
  DeletedDirective,
  DirectiveList,
  DirectiveParams,
  DirectiveRecord,
  UpdateDirectiveBody,
} from '../../contract/directives.js';
import { inBank, router, send } from './router.js';

const TAG = ['Directives'];
const orUndefined = <T>(v: T | null | undefined) => v ?? undefined;

/** A bank's directives: hard rules that every Reflect answer follows. Admin scope throughout. */
export const directiveRoutes = router()
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/directives',
      tags: TAG,
      summary: 'List directives',
      description: 'Highest priority first.',
      middleware: [guard('directives.list')] as const,
      request: { params: BankParam },
      responses: ok(DirectiveList),
    }),
    async (c) => send(c, await listDirectives(...inBank(c))),
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/banks/{bank}/directives',
      tags: TAG,
      summary: 'Create a directive',
      middleware: [guard('directives.create')] as const,
      request: { params: BankParam, ...jsonBody(CreateDirectiveBody) },
      responses: ok(DirectiveRecord, 'Created', 201),
    }),
    async (c) => {
      const b = c.req.valid('json');
      const d = await createDirective(...inBank(c), {
        text: (b.text ?? b.content)!,
        name: b.name,
        priority: b.priority,
        tags: b.tags,
        active: b.active ?? b.is_active,
      });
      return send(c, d, 201);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/directives/{id}',
      tags: TAG,
      summary: 'Get a directive',
      middleware: [guard('directives.get')] as const,
      request: { params: DirectiveParams },
      responses: ok(DirectiveRecord),
    }),
    async (c) => send(c, await getDirective(...inBank(c), c.req.valid('param').id)),
  )
  .openapi(
    createRoute({
      method: 'patch',
      path: '/banks/{bank}/directives/{id}',
      tags: TAG,
      summary: 'Update a directive',
      description: 'Fields left out (or null) keep their value.',
      middleware: [guard('directives.update')] as const,
      request: { params: DirectiveParams, ...jsonBody(UpdateDirectiveBody) },
      responses: ok(DirectiveRecord),
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const b = c.req.valid('json');
      const d = await updateDirective(...inBank(c), id, {
        text: orUndefined(b.text ?? b.content),
        name: orUndefined(b.name),
        priority: orUndefined(b.priority),
        tags: orUndefined(b.tags),
        active: orUndefined(b.active ?? b.is_active),
      });
      return send(c, d);
    },
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/banks/{bank}/directives/{id}',
      tags: TAG,
      summary: 'Delete a directive',
      middleware: [guard('directives.delete')] as const,
      request: { params: DirectiveParams },
      responses: ok(DeletedDirective),
    }),
    async (c) => send(c, await deleteDirective(...inBank(c), c.req.valid('param').id)),
  );
