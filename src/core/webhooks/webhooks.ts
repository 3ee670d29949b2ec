import { randomBytes, randomUUID } from 'node:crypto';
import {
  DEFAULT_WEBHOOK_TIMEOUT_SECONDS,
  MAX_WEBHOOKS_PER_BANK,
  WEBHOOK_EVENTS,
  type WebhookEventType,
} from '../../contract/webhooks.js';
import type { Page } from '../types.js';
import type { WebhookDeliveryRecord, WebhookRecord, BankStore, WebhookStore } from '../../store/store.js';
import { requireBank } from '../banks.js';
import { AppError, notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import type { Deps, Services } from '../services.js';
import { checkWebhookUrl } from './address.js';

/** A webhook's HTTP configuration, every field present. */
export interface HttpConfig {
  method: 'POST';
  timeout_seconds: number;
  headers: Record<string, string>;
  params: Record<string, string>;
}

export interface HttpConfigInput {
  method?: 'POST';
  timeout_seconds?: number;
  headers?: Record<string, string>;
  params?: Record<string, string>;
}

export interface WebhookInput {
  url: string;
  secret?: string | null;
  event_types?: WebhookEventType[];
  enabled?: boolean;
  http_config?: HttpConfigInput;
}

/** The configuration as stored (JSON) and read back; unreadable parts fall back to defaults. */
export function httpConfigOf(stored: string | HttpConfigInput | undefined): HttpConfig {
  let c: HttpConfigInput = {};
  if (typeof stored === 'string') {
    try {
      c = JSON.parse(stored) as HttpConfigInput;
    } catch {}
  } else if (stored) c = stored;
  return {
    method: 'POST',
    timeout_seconds: c.timeout_seconds ?? DEFAULT_WEBHOOK_TIMEOUT_SECONDS,
    headers: { ...c.headers },
    params: { ...c.params },
  };
}

/** A webhook as the API shows it: the secret only in the creation answer, never afterwards. */
function webhookView(w: WebhookRecord, shownSecret: string | null = null) {
  return {
    id: w.id,
    bank_id: w.bank_id,
    url: w.url,
    secret: shownSecret,
    has_secret: w.secret !== null,
    event_types: w.event_types,
    enabled: w.enabled,
    http_config: httpConfigOf(w.http_config),
    created_at: w.created_at,
    updated_at: w.updated_at,
  };
}

/** A delivery as the deliveries log shows it (Hindsight's field names). */
function deliveryView(d: WebhookDeliveryRecord) {
  const { next_attempt_at, ...rest } = d;
  return { ...rest, next_retry_at: next_attempt_at };
}

const allowPrivate = (s: Pick<Services, 'webhooks'>) => s.webhooks?.allowPrivate === true;
const newSecret = () => `whsec_${randomBytes(24).toString('base64url')}`;

async function findWebhook(s: Deps<BankStore & WebhookStore>, projectId: string, bankId: string, id: string) {
  await requireBank(s, projectId, bankId);
  const w = isUuid(id) ? await s.store.getWebhook(projectId, bankId, id) : null;
  if (!w) throw notFound(`webhook '${id}'`);
  return w;
}

export async function listWebhooks(s: Deps<BankStore & WebhookStore>, projectId: string, bankId: string) {
  await requireBank(s, projectId, bankId);
  return { items: (await s.store.listWebhooks(projectId, bankId)).map((w) => webhookView(w)) };
}

/** Creates a webhook; the answer shows its secret, the only time it is shown. */
export async function createWebhook(
  s: Deps<BankStore & WebhookStore, 'webhooks'>,
  projectId: string,
  bankId: string,
  input: WebhookInput,
) {
  await requireBank(s, projectId, bankId);
  const url = await checkWebhookUrl(input.url, allowPrivate(s));
  const secret = input.secret === null ? null : (input.secret ?? newSecret());
  // The limit is checked by the insert itself, under the bank's lock.
  const w = await s.store.insertWebhook(
    projectId,
    bankId,
    {
      id: randomUUID(),
      url,
      secret,
      event_types: [...new Set(input.event_types ?? WEBHOOK_EVENTS)],
      enabled: input.enabled ?? true,
      http_config: JSON.stringify(httpConfigOf(input.http_config)),
    },
    MAX_WEBHOOKS_PER_BANK,
  );
  if (!w) {
    throw new AppError(
      'conflict',
      `bank '${bankId}' already holds ${MAX_WEBHOOKS_PER_BANK} webhooks, the most allowed`,
    );
  }
  return webhookView(w, secret);
}

/** Fields left undefined keep their value; `secret: null` removes the secret. */
export async function updateWebhook(
  s: Deps<BankStore & WebhookStore, 'webhooks'>,
  projectId: string,
  bankId: string,
  id: string,
  patch: Partial<WebhookInput>,
) {
  await findWebhook(s, projectId, bankId, id);
  const url = patch.url === undefined ? undefined : await checkWebhookUrl(patch.url, allowPrivate(s));
  const w = await s.store.updateWebhook(projectId, bankId, id, {
    url,
    secret: patch.secret,
    event_types: patch.event_types && [...new Set(patch.event_types)],
    enabled: patch.enabled,
    http_config: patch.http_config && JSON.stringify(httpConfigOf(patch.http_config)),
  });
  if (!w) throw notFound(`webhook '${id}'`);
  return webhookView(w);
}

/** Deletes a webhook; its pending deliveries go with it. */
export async function deleteWebhook(
  s: Deps<BankStore & WebhookStore>,
  projectId: string,
  bankId: string,
  id: string,
) {
  await requireBank(s, projectId, bankId);
  if (!isUuid(id) || !(await s.store.deleteWebhook(projectId, bankId, id))) throw notFound(`webhook '${id}'`);
  return { success: true as const, deleted: true as const, id };
}

export async function listWebhookDeliveries(
  s: Deps<BankStore & WebhookStore>,
  projectId: string,
  bankId: string,
  id: string,
  page: { limit?: number; cursor?: string },
): Promise<Page<ReturnType<typeof deliveryView>>> {
  await findWebhook(s, projectId, bankId, id);
  const out = await s.store.listWebhookDeliveries(projectId, bankId, id, {
    limit: page.limit ?? 50,
    cursor: page.cursor,
  });
  return { items: out.items.map(deliveryView), next_cursor: out.next_cursor };
}
