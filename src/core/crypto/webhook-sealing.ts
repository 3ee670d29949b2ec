import type { Store, WebhookRecord, WebhookStore } from '../../store/store.js';
import { type BankCodec, type Field, storePlain } from './codec.js';
import type { Keyring } from './keyring.js';

/** What the encrypting store lends the webhook methods. */
export interface SealingTools {
  /** The codec new rows of the bank are sealed with; null when its config wants plain rows. */
  writeCodec(projectId: string, bankId: string): Promise<BankCodec | null>;
  /** Opens a stored value of the bank (plain ones unescaped). */
  open(projectId: string, bankId: string, v: string, field: Field): Promise<string>;
}

/**
 * The webhook methods of the encrypting store. A webhook's secret and HTTP configuration (its
 * headers may carry credentials) are sealed with the bank's data key whenever a master key is
 * configured, encrypted bank or not (a plain bank gets a data key for them); deliveries' bodies
 * are sealed in encrypted banks, like queued Retain payloads.
 */
export function webhookSealing(
  inner: Store,
  keyring: Keyring | null,
  tools: SealingTools,
): Pick<
  WebhookStore,
  | 'insertWebhook'
  | 'updateWebhook'
  | 'listWebhooks'
  | 'getWebhook'
  | 'enqueueWebhookEvents'
  | 'claimWebhookDelivery'
> {
  async function secretCodec(projectId: string, bankId: string): Promise<BankCodec | null> {
    if (!keyring) return tools.writeCodec(projectId, bankId);
    const st = await inner.bankEncryption(projectId, bankId);
    const key =
      st?.key ?? (await inner.createBankKey(projectId, bankId, keyring.create(projectId, bankId), false));
    return keyring.codec(projectId, bankId, key);
  }
  const seal = (codec: BankCodec | null, v: string) => (codec ? codec.seal(v, 'webhook') : storePlain(v));
  async function opened<T extends WebhookRecord>(projectId: string, w: T): Promise<T> {
    const open = (v: string) => tools.open(projectId, w.bank_id, v, 'webhook');
    return {
      ...w,
      secret: w.secret === null ? null : await open(w.secret),
      http_config: await open(w.http_config),
    };
  }

  return {
    async insertWebhook(projectId, bankId, w, max) {
      const codec = await secretCodec(projectId, bankId);
      const written = await inner.insertWebhook(
        projectId,
        bankId,
        {
          ...w,
          secret: w.secret === null ? null : seal(codec, w.secret),
          http_config: seal(codec, w.http_config),
        },
        max,
      );
      return written && opened(projectId, written);
    },

    async updateWebhook(projectId, bankId, id, patch) {
      const codec = await secretCodec(projectId, bankId);
      const written = await inner.updateWebhook(projectId, bankId, id, {
        ...patch,
        secret: typeof patch.secret === 'string' ? seal(codec, patch.secret) : patch.secret,
        http_config: patch.http_config === undefined ? undefined : seal(codec, patch.http_config),
      });
      return written && opened(projectId, written);
    },

    async listWebhooks(projectId, bankId) {
      return Promise.all((await inner.listWebhooks(projectId, bankId)).map((w) => opened(projectId, w)));
    },

    async getWebhook(projectId, bankId, id) {
      const w = await inner.getWebhook(projectId, bankId, id);
      return w && opened(projectId, w);
    },

    async enqueueWebhookEvents(projectId, bankId, events) {
      const codec = await tools.writeCodec(projectId, bankId);
      return inner.enqueueWebhookEvents(
        projectId,
        bankId,
        events.map((e) => ({ ...e, body: codec ? codec.seal(e.body, 'payload') : storePlain(e.body) })),
      );
    },

    async claimWebhookDelivery(workerId, leaseMs) {
      const d = await inner.claimWebhookDelivery(workerId, leaseMs);
      if (!d) return null;
      const open = (v: string, field: Field) => tools.open(d.projectId, d.bankId, v, field);
      return {
        ...d,
        body: await open(d.body, 'payload'),
        webhook: {
          ...d.webhook,
          secret: d.webhook.secret === null ? null : await open(d.webhook.secret, 'webhook'),
          http_config: await open(d.webhook.http_config, 'webhook'),
        },
      };
    },
  };
}
