import { createRoute } from '@hono/zod-openapi';
import { cancelOperation } from '../../core/operation-charges.js';
import { getOperation, listOperations } from '../../core/operations.js';
import { guard } from '../auth.js';
import { BankParam } from '../../contract/common.js';
import { ok } from './openapi.js';
import {
  OperationOutcome,
  OperationPage,
  OperationParams,
  OperationQuery,
  OperationRecord,
} from '../../contract/operations.js';
import { inBank, router, send } from './router.js';

/** Background operations of a bank: async Retain and other durable work. */
export const operationRoutes = router()
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/operations',
      tags: ['Operations'],
      summary: 'List operations',
      description:
        'Newest first, paged by `cursor` or `offset`; `operations` repeats `items` and `total` counts every match (Hindsight’s shape).',
      middleware: [guard('operations.list')] as const,
      request: { params: BankParam, query: OperationQuery },
      responses: ok(OperationPage),
    }),
    async (c) => {
      const q = c.req.valid('query');
      const page = await listOperations(
        ...inBank(c),
        { status: q.status, kind: q.type },
        { limit: q.limit ?? 50, cursor: q.cursor, offset: q.offset },
      );
      return send(c, page);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/operations/{id}',
      tags: ['Operations'],
      summary: 'Get an operation',
      middleware: [guard('operations.get')] as const,
      request: { params: OperationParams },
      responses: ok(OperationRecord),
    }),
    async (c) => send(c, await getOperation(...inBank(c), c.req.valid('param').id)),
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/banks/{bank}/operations/{id}',
      tags: ['Operations'],
      summary: 'Cancel a pending operation',
      description:
        'A queued Retain, upload or import can also be cancelled while it runs (the slice under way then stores nothing), and gives back what it was charged for the items it did not store. Any other kind already running, or any finished operation, is a 409.',
      middleware: [guard('operations.cancel')] as const,
      request: { params: OperationParams },
      responses: ok(OperationOutcome),
    }),
    async (c) => send(c, await cancelOperation(...inBank(c), c.req.valid('param').id)),
  );
