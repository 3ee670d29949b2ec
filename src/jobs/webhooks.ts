import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Services } from '../core/services.js';
import { httpConfigOf } from '../core/webhooks/webhooks.js';
import type { AttemptOutcome, ClaimedDelivery } from '../store/store.js';
import { RESPONSE_CAP, sendWebhook, signature } from './webhook-send.js';
import { naps } from './naps.js';

export interface DelivererOptions {
  /** Private, loopback, link-local and metadata targets allowed (MNEMO_WEBHOOK_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  /** How often an idle deliverer looks for due deliveries. */
  pollMs?: number;
  /** How long a claim holds; longer than the longest attempt (30 s). */
  leaseMs?: number;
  /** Attempts before a delivery is marked failed. */
  maxAttempts?: number;
  /** The wait after the first failed attempt; each next wait is six times longer (at most 6 h). */
  backoffMs?: number;
  /** Finished deliveries kept per webhook in its log. */
  keep?: number;
  /** Deliveries sent at once by this process. */
  concurrency?: number;
}

export interface Deliverer {
  kick(): void;
  /** Stops claiming; waits for the attempts under way. */
  stop(): Promise<void>;
}

const MAX_WAIT_MS = 6 * 3600_000;

/** The wait before attempt `attempt + 1`: 5 s, 30 s, 3 min, 18 min, 1.8 h by default. */
export const retryDelay = (attempt: number, backoffMs: number) =>
  Math.min(MAX_WAIT_MS, backoffMs * 6 ** (attempt - 1));

/**
 * Delivers webhook events: claims due deliveries from the database (any mnemo process may; one
 * holds each at a time), POSTs each signed body, and records every attempt. A failed attempt
 * (an error, a timeout, a non-2xx answer, a redirect) is retried with exponential backoff until
 * `maxAttempts`. Deliveries are rows: what is pending when a process stops is sent by the next.
 */
export function startDeliverer(s: Services, log: Logger, opts: DelivererOptions): Deliverer {
  const id = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const pollMs = opts.pollMs ?? 1000;
  const leaseMs = opts.leaseMs ?? 60_000;
  const maxAttempts = opts.maxAttempts ?? 6;
  const backoffMs = opts.backoffMs ?? 5000;
  const keep = opts.keep ?? 1000;
  const stopping = new AbortController();
  const { nap, wakeAll } = naps();
  const running = new Set<Promise<void>>();

  async function attempt(d: ClaimedDelivery): Promise<AttemptOutcome> {
    const started = Date.now();
    const cfg = httpConfigOf(d.webhook.http_config);
    const base = { attempt: d.attempt, at: new Date(started).toISOString() };
    let responseStatus: number | null = null;
    let responseBody: string | null = null;
    let error: string | null = null;
    if (!d.webhook.enabled) error = 'the webhook is disabled';
    else {
      try {
        const url = new URL(d.webhook.url);
        for (const [k, v] of Object.entries(cfg.params)) url.searchParams.set(k, v);
        const res = await sendWebhook({
          url: url.toString(),
          body: d.body,
          timeoutMs: cfg.timeout_seconds * 1000,
          allowPrivate: opts.allowPrivate,
          headers: {
            ...cfg.headers,
            'user-agent': 'mnemo-webhooks',
            'x-hindsight-event': d.eventType,
            'x-mnemo-delivery': d.id,
            ...(d.webhook.secret ? { 'x-hindsight-signature': signature(d.webhook.secret, d.body) } : {}),
          },
        });
        responseStatus = res.status;
        // PostgreSQL text holds no NUL: a receiver's answer must not stop its attempt being recorded.
        responseBody = res.body.slice(0, RESPONSE_CAP).replaceAll('\0', '\uFFFD');
        if (res.status >= 300 && res.status < 400) error = `redirect (${res.status}) not followed`;
        else if (res.status < 200 || res.status >= 300) error = `the receiver answered ${res.status}`;
      } catch (err) {
        error = (err instanceof Error ? err.message : String(err)).slice(0, 1000).replaceAll('\0', '\uFFFD');
      }
    }
    const ok = error === null;
    const final = ok || !d.webhook.enabled || d.attempt >= maxAttempts;
    return {
      status: ok ? 'delivered' : final ? 'failed' : 'pending',
      retryInMs: final ? 0 : retryDelay(d.attempt, backoffMs),
      url: d.webhook.url,
      responseBody,
      attempt: {
        ...base,
        outcome: ok ? 'delivered' : 'failed',
        response_status: responseStatus,
        error,
        duration_ms: Date.now() - started,
      },
    };
  }

  async function runOne(): Promise<boolean> {
    const d = await s.store.claimWebhookDelivery(id, leaseMs);
    if (!d) return false;
    const outcome = await attempt(d);
    const held = await s.store.finishWebhookAttempt(d.projectId, d.bankId, d.id, id, outcome, keep);
    const fields = { delivery: d.id, webhook: d.webhookId, bank: d.bankId, attempt: d.attempt };
    if (!held) log.warn(fields, 'webhook delivery lease lost');
    else if (outcome.status === 'delivered') log.info(fields, 'webhook delivered');
    else
      log.warn({ ...fields, err: outcome.attempt.error, status: outcome.status }, 'webhook attempt failed');
    return true;
  }

  async function loop(): Promise<void> {
    while (!stopping.signal.aborted) {
      let worked = false;
      try {
        worked = await runOne();
      } catch (err) {
        log.error({ err }, 'webhook deliverer could not claim work');
      }
      if (!worked && !stopping.signal.aborted) {
        await nap(pollMs);
      }
    }
  }

  for (let i = 0; i < (opts.concurrency ?? 4); i++) {
    const p = loop();
    running.add(p);
    p.finally(() => running.delete(p));
  }
  return {
    kick: wakeAll,
    async stop() {
      stopping.abort();
      wakeAll();
      await Promise.allSettled([...running]);
    },
  };
}
