import { z } from 'zod';
import { named } from './names.js';
import { DateOut } from './common.js';

/** The events a webhook can subscribe to. */
export const WEBHOOK_EVENTS = ['retain.completed', 'consolidation.completed'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

/** Most webhooks one bank may hold: every event is recorded once per subscribed webhook. */
export const MAX_WEBHOOKS_PER_BANK = 20;
/** Longest a delivery attempt waits for the receiver's answer. */
export const MAX_WEBHOOK_TIMEOUT_SECONDS = 30;
export const DEFAULT_WEBHOOK_TIMEOUT_SECONDS = 10;

/** Headers the sender sets itself: a webhook's own headers cannot replace them. */
export const RESERVED_WEBHOOK_HEADERS = [
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'x-hindsight-signature',
  'x-hindsight-event',
  'x-mnemo-delivery',
];

const HeaderName = z
  .string()
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/, 'must be an HTTP header name')
  .refine((h) => !RESERVED_WEBHOOK_HEADERS.includes(h.toLowerCase()), 'is set by the sender');
const HeaderValue = z
  .string()
  .max(1024)
  .regex(/^[^\r\n\0]*$/, 'must not hold line breaks');
const small = <T extends z.ZodType>(v: T) =>
  z.record(z.string(), v).refine((r) => Object.keys(r).length <= 20, 'at most 20 entries');

export const WebhookHttpConfig = z
  .object({
    method: z.literal('POST').optional().meta({ description: 'Only POST (the signed body is the event)' }),
    timeout_seconds: z
      .number()
      .int()
      .min(1)
      .max(MAX_WEBHOOK_TIMEOUT_SECONDS)
      .optional()
      .meta({
        description: `Seconds an attempt waits for the answer; default ${DEFAULT_WEBHOOK_TIMEOUT_SECONDS}`,
      }),
    headers: small(HeaderValue)
      .refine((r) => Object.keys(r).every((k) => HeaderName.safeParse(k).success), {
        message: `header names must be HTTP tokens other than ${RESERVED_WEBHOOK_HEADERS.join(', ')}`,
      })
      .optional()
      .meta({ description: 'Extra request headers (stored sealed when a master key is configured)' }),
    params: small(z.string().max(1024)).optional().meta({ description: 'Extra query parameters' }),
  })
  .register(named, { name: 'WebhookHttpConfig' });

const Url = z.string().min(1).max(2048).meta({
  description:
    'http(s) URL. Private, loopback, link-local and metadata addresses are refused unless the operator sets MNEMO_WEBHOOK_ALLOW_PRIVATE=1',
});
const Secret = z.string().min(8).max(256);
const EventTypes = z
  .array(z.enum(WEBHOOK_EVENTS))
  .min(1)
  .max(WEBHOOK_EVENTS.length * 2);

export const CreateWebhookBody = z
  .object({
    url: Url,
    secret: Secret.nullish().meta({
      description: 'HMAC-SHA256 signing secret; one is generated (and shown once) when none is given',
    }),
    event_types: EventTypes.optional().meta({ description: 'Default: every event' }),
    enabled: z.boolean().optional(),
    http_config: WebhookHttpConfig.optional(),
  })
  .meta({ example: { url: 'https://example.com/hooks/mnemo', event_types: ['retain.completed'] } })
  .register(named, { name: 'WebhookCreate' });

/** Fields left out (or null) keep their value, except `secret`: null removes it (deliveries go unsigned). */
export const UpdateWebhookBody = z
  .object({
    url: Url.nullish(),
    secret: Secret.nullish(),
    event_types: EventTypes.nullish(),
    enabled: z.boolean().nullish(),
    http_config: WebhookHttpConfig.nullish(),
  })
  .meta({ example: { enabled: false } })
  .register(named, { name: 'WebhookUpdate' });

export const WebhookOut = z
  .object({
    id: z.string(),
    bank_id: z.string(),
    url: z.string(),
    secret: z
      .string()
      .nullable()
      .meta({ description: 'The signing secret: in the creation answer only, null everywhere else' }),
    has_secret: z.boolean().meta({ description: 'Whether deliveries are signed' }),
    event_types: z.array(z.string()),
    enabled: z.boolean(),
    http_config: z.object({
      method: z.string(),
      timeout_seconds: z.number().int(),
      headers: z.record(z.string(), z.string()),
      params: z.record(z.string(), z.string()),
    }),
    created_at: DateOut,
    updated_at: DateOut,
  })
  .register(named, { name: 'Webhook' });

export const WebhookList = z.object({ items: z.array(WebhookOut) }).register(named, { name: 'WebhookList' });

export const WebhookDeliveryAttempt = z.object({
  attempt: z.number().int(),
  at: DateOut,
  outcome: z.enum(['delivered', 'failed']),
  response_status: z.number().int().nullable(),
  error: z.string().nullable(),
  duration_ms: z.number(),
});

export const WebhookDeliveryOut = z
  .object({
    id: z.string(),
    webhook_id: z.string(),
    url: z.string(),
    event_type: z.string(),
    status: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.number().int(),
    next_retry_at: DateOut.nullable(),
    last_error: z.string().nullable(),
    last_response_status: z.number().int().nullable(),
    last_response_body: z
      .string()
      .nullable()
      .meta({ description: 'The start of the last answer (1 KB at most)' }),
    last_attempt_at: DateOut.nullable(),
    delivered_at: DateOut.nullable(),
    attempt_log: z.array(WebhookDeliveryAttempt).meta({ description: 'Every attempt, oldest first' }),
    created_at: DateOut,
    updated_at: DateOut,
  })
  .register(named, { name: 'WebhookDelivery' });

export const WebhookDeliveryList = z
  .object({ items: z.array(WebhookDeliveryOut), next_cursor: z.string().nullable() })
  .register(named, { name: 'WebhookDeliveryList' });

export const WebhookParams = z.object({
  bank: z.string().meta({ param: { name: 'bank', in: 'path' } }),
  webhook_id: z.string().meta({ param: { name: 'webhook_id', in: 'path' } }),
});

export const WebhookDeliveriesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).optional().meta({ description: 'Default 50' }),
  cursor: z.string().max(200).optional(),
});

export const DeletedWebhook = z.object({
  success: z.literal(true),
  deleted: z.literal(true),
  id: z.string(),
});
