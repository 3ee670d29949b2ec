import type { RequestOptions, Transport } from '../http.js';
import { PagedList, type Page } from '../pagination.js';
import type {
  CreateWebhookParams,
  DeletedWebhook,
  PageParams,
  UpdateWebhookParams,
  Webhook,
  WebhookDelivery,
} from '../types.js';
import { bankPath, seg } from './paths.js';

/** Webhooks: a bank's events POSTed, signed, to your URL (see docs/webhooks.md). Needs `admin`. */
export class WebhooksResource {
  constructor(
    private readonly t: Transport,
    private readonly prefix: string,
  ) {}

  /** The bank's webhooks, oldest first; secrets are never shown (`has_secret`). */
  async list(bank: string, options?: RequestOptions): Promise<Webhook[]> {
    const res = await this.t.request<{ items: Webhook[] }>('GET', bankPath(this.prefix, bank, '/webhooks'), {
      options,
    });
    return res.items;
  }

  /** Creates a webhook; the answer's `secret` (generated unless given) is shown this once. */
  create(bank: string, params: CreateWebhookParams, options?: RequestOptions): Promise<Webhook> {
    return this.t.request('POST', bankPath(this.prefix, bank, '/webhooks'), { body: params, options });
  }

  /** Changes the given fields; `null` or absent leaves a field as it is, except `secret: null` (removes it). */
  update(bank: string, id: string, params: UpdateWebhookParams, options?: RequestOptions): Promise<Webhook> {
    return this.t.request('PATCH', bankPath(this.prefix, bank, `/webhooks/${seg(id)}`), {
      body: params,
      options,
    });
  }

  /** Deletes a webhook and its deliveries. */
  delete(bank: string, id: string, options?: RequestOptions): Promise<DeletedWebhook> {
    return this.t.request('DELETE', bankPath(this.prefix, bank, `/webhooks/${seg(id)}`), { options });
  }

  /** A webhook's deliveries, newest first, each with every attempt. */
  deliveries(
    bank: string,
    id: string,
    params: PageParams = {},
    options?: RequestOptions,
  ): PagedList<WebhookDelivery> {
    const { cursor, ...rest } = params;
    return new PagedList(
      (c) =>
        this.t.request<Page<WebhookDelivery>>(
          'GET',
          bankPath(this.prefix, bank, `/webhooks/${seg(id)}/deliveries`),
          { query: { ...rest, cursor: c }, options },
        ),
      cursor,
    );
  }
}
