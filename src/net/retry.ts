/** Shared pieces of the HTTP clients' retry loops (language models, embeddings). */

const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 8_000;
/** Longer waits asked for by a provider are cut to this, so that one call never stalls for minutes. */
const RETRY_AFTER_CAP_MS = 30_000;

/** Exponential with jitter, so clients that failed together do not retry together. */
export function backoffMs(retry: number): number {
  return Math.min(BACKOFF_BASE_MS * 2 ** retry, BACKOFF_CAP_MS) * (0.5 + Math.random() / 2);
}

/** How a client waits before its next attempt; rejects with the signal's reason when it aborts. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** A client's option of how it waits between attempts. */
export interface RetryWaits {
  /**
   * @internal Not for configuration: how a retry waits, so tests can check the waits the client
   * asks for (Retry-After, backoff) without spending them. Default: a timer the signal cuts short.
   */
  sleep?: Sleep | undefined;
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * How long the provider asks us to wait, in ms: `retry-after-ms` (OpenAI), else `Retry-After` as
 * seconds or an HTTP date. Capped; undefined when absent or unreadable.
 */
export function parseRetryAfter(headers: Headers, now = Date.now()): number | undefined {
  const ms = Number(headers.get('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return Math.min(ms, RETRY_AFTER_CAP_MS);
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.min(Number(value) * 1000, RETRY_AFTER_CAP_MS);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.min(Math.max(0, date - now), RETRY_AFTER_CAP_MS);
}
