import { createRoute } from '@hono/zod-openapi';
import { getReceipt, verifyReceipt } from '../../core/receipts.js';
import { Receipt, ReceiptParam, ReceiptVerdict, VerifyReceiptBody } from '../../contract/receipts.js';
import { authOf, guard } from '../auth.js';
import { errorResponse, jsonBody, ok } from './openapi.js';
import { router, send, servicesOf } from './router.js';

const TAG = ['Receipts'];

/** Receipts of forgets (deleted memories, documents, banks): read again, and checked. */
export const receiptRoutes = router()
  .openapi(
    createRoute({
      method: 'get',
      path: '/receipts/{id}',
      tags: TAG,
      summary: 'Get a forget receipt',
      description:
        'The signed receipt a deletion of a memory, document or bank answered with. It outlives its bank; a key limited to some banks sees the receipts of those banks only.',
      middleware: [guard('receipts.get')] as const,
      request: { params: ReceiptParam },
      responses: { ...ok(Receipt), 404: errorResponse('No such receipt (or not one of this key’s banks)') },
    }),
    async (c) => {
      const auth = authOf(c);
      return send(c, await getReceipt(servicesOf(c), auth.projectId, c.req.valid('param').id, auth.banks));
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/receipts/verify',
      tags: TAG,
      summary: 'Verify a forget receipt',
      description:
        'Whether this server signed the receipt as given, for this project. Only the server holds the signing key, so this is how a receipt is checked.',
      middleware: [guard('receipts.verify')] as const,
      request: jsonBody(VerifyReceiptBody),
      responses: ok(ReceiptVerdict),
    }),
    async (c) => send(c, await verifyReceipt(servicesOf(c), authOf(c).projectId, c.req.valid('json'))),
  );
