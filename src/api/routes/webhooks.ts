import { createRoute } from '@hono/zod-openapi';
import { BankParam } from '../../contract/common.js';
import {
  CreateWebhookBody,
  DeletedWebhook,
  UpdateWebhookBody,
  WebhookDeliveriesQuery,
  WebhookDeliveryList,
  WebhookList,
  WebhookOut,
  WebhookParams,
} from '../../contract/webhooks.js';
import {
  createWebhook,
  deleteWebhook,
  listWebhookDeliveries,
  listWebhooks,
  updateWebhook,
} from '../../core/webhooks/webhooks.js';
import { guard } from '../auth.js';
import { errorResponse, jsonBody, ok } from './openapi.js';
import { inBank, router, send } from './router.js';

const TAG = ['Webhooks'];
const orUndefined = <T>(v: T | null | undefined) => v ?? undefined;

/**
 * A bank's webhooks (Hindsight's paths): signed POSTs of `retain.completed` and
 * `consolidation.completed`, retried with backoff, every attempt in the deliveries log.
 * Admin scope throughout: a webhook sends the bank's events elsewhere.
 */
export const webhookRoutes = router()
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/webhooks',
      tags: TAG,
      summary: 'List webhooks',
      description: 'Oldest first. Secrets are never shown (`has_secret` says whether there is one).',
      middleware: [guard('webhooks.list')] as const,
      request: { params: BankParam },
      responses: ok(WebhookList),
    }),
    async (c) => send(c, await listWebhooks(...inBank(c))),
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/banks/{bank}/webhooks',
      tags: TAG,
      summary: 'Create a webhook',
      description:
        'The answer shows the signing secret (generated unless given), the only time it is shown. Each delivery is signed `X-Hindsight-Signature: sha256=<hex HMAC-SHA256 of the body>`.',
      middleware: [guard('webhooks.create')] as const,
      request: { params: BankParam, ...jsonBody(CreateWebhookBody) },
      responses: {
        ...ok(WebhookOut, 'Created', 201),
        409: errorResponse('The bank holds the most webhooks allowed'),
      },
    }),
    async (c) => {
      const b = c.req.valid('json');
      const w = await createWebhook(...inBank(c), {
        url: b.url,
        secret: b.secret,
        event_types: b.event_types,
        enabled: b.enabled,
        http_config: b.http_config,
      });
      return send(c, w, 201);
    },
  )
  .openapi(
    createRoute({
      method: 'patch',
      path: '/banks/{bank}/webhooks/{webhook_id}',
      tags: TAG,
      summary: 'Update a webhook',
      description: 'Fields left out (or null) keep their value, except `secret`: null removes it.',
      middleware: [guard('webhooks.update')] as const,
      request: { params: WebhookParams, ...jsonBody(UpdateWebhookBody) },
      responses: ok(WebhookOut),
    }),
    async (c) => {
      const { webhook_id } = c.req.valid('param');
      const b = c.req.valid('json');
      const w = await updateWebhook(...inBank(c), webhook_id, {
        url: orUndefined(b.url),
        secret: b.secret,
        event_types: orUndefined(b.event_types),
        enabled: orUndefined(b.enabled),
        http_config: orUndefined(b.http_config),
      });
      return send(c, w);
    },
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/banks/{bank}/webhooks/{webhook_id}',
      tags: TAG,
      summary: 'Delete a webhook',
      description: 'Its pending deliveries are dropped with it.',
      middleware: [guard('webhooks.delete')] as const,
      request: { params: WebhookParams },
      responses: ok(DeletedWebhook),
    }),
    async (c) => send(c, await deleteWebhook(...inBank(c), c.req.valid('param').webhook_id)),
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/banks/{bank}/webhooks/{webhook_id}/deliveries',
      tags: TAG,
      summary: "List a webhook's deliveries",
      description:
        'Newest first: each delivery with its status (`pending`, `delivered`, `failed`), the last answer and every attempt.',
      middleware: [guard('webhooks.deliveries')] as const,
      request: { params: WebhookParams, query: WebhookDeliveriesQuery },
      responses: ok(WebhookDeliveryList),
    }),
    async (c) => {
      const { webhook_id } = c.req.valid('param');
      const q = c.req.valid('query');
      return send(
        c,
        await listWebhookDeliveries(...inBank(c), webhook_id, {
          limit: q.limit,
          cursor: q.cursor,
        }),
      );
    },
  );
