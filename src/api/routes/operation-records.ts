import { createRoute } from '@hono/zod-openapi';
import { deleteOperation } from '../../core/operations.js';
import { retryOperation } from '../../core/operation-charges.js';
import { guard } from '../auth.js';
import { OperationOutcome, OperationParams } from '../../contract/operations.js';
import { errorResponse, ok } from './openapi.js';
import { inBank, router, send } from './router.js';

/** What can be done with an operation once it has ended: run a failed one again, or forget it. */
export const operationRecordRoutes = router()
  .openapi(
    createRoute({
      method: 'post',
      path: '/banks/{bank}/operations/{id}/retry',
      tags: ['Operations'],
      summary: 'Retry a failed operation',
      description:
        'Queues it again, to run from the progress it had recorded, with its error cleared. Any state but `failed` is a 409. A Retain or import gave back, as it failed, the charge of the items it had not stored: the retry is charged them again first (a 429 over a quota or budget, and it stays failed).',
      middleware: [guard('operations.retry')] as const,
      request: { params: OperationParams },
      responses: {
        ...ok(OperationOutcome),
        409: errorResponse('The operation has not failed'),
        429: errorResponse('A quota or cost budget of the project is spent'),
      },
    }),
    async (c) => send(c, await retryOperation(...inBank(c), c.req.valid('param').id)),
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/banks/{bank}/operations/{id}/delete',
      tags: ['Operations'],
      summary: 'Delete a finished operation',
      description:
        'Removes the record of a completed, failed or cancelled operation. A pending or running one is a 409: cancel it first (`DELETE .../operations/{id}`).',
      middleware: [guard('operations.delete')] as const,
      request: { params: OperationParams },
      responses: { ...ok(OperationOutcome), 409: errorResponse('The operation has not finished') },
    }),
    async (c) => send(c, await deleteOperation(...inBank(c), c.req.valid('param').id)),
  );
