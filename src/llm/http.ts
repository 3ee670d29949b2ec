import { LlmError } from './errors.js';
import { isRecord } from './reply.js';
import { Semaphore } from './semaphore.js';
import { backoffMs, parseRetryAfter, type RetryWaits, sleep } from '../net/retry.js';

/** Transport settings shared by the providers. */
export interface TransportOptions extends RetryWaits {
  /** Provider name used in error messages. */
  label: string;
  headers: Record<string, string>;
  /** Removed from every error message (the API key). */
  secret?: string | undefined;
  /** Per attempt, counted from when the request is sent (time waiting for a concurrency slot is not included). */
  timeoutMs?: number | undefined;
  /** Extra attempts after a retryable failure (408, 409, 429, 5xx, network error). */
  maxRetries?: number | undefined;
  /** Requests in flight at once. */
  concurrency?: number | undefined;
  fetch?: typeof fetch | undefined;
}

/** POSTs a JSON body and returns the parsed JSON reply; throws `LlmError`, or the caller's abort reason. */
export type PostJson = (url: string, body: unknown, signal?: AbortSignal) => Promise<unknown>;

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_RETRIES = 2;
const DEFAULT_CONCURRENCY = 4;
const DETAIL_MAX_CHARS = 300;

type Attempt = { data: unknown } | { error: LlmError; retryable: boolean; retryAfterMs?: number | undefined };

/** Builds the POST function of one model instance: timeouts, retries with backoff, and a concurrency limit. */
export function createJsonPoster(options: TransportOptions): PostJson {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  const limiter = new Semaphore(options.concurrency ?? DEFAULT_CONCURRENCY);
  const doFetch = options.fetch ?? fetch;
  const wait = options.sleep ?? sleep;
  const { label, secret } = options;
  const redact = (text: string) => (secret ? text.split(secret).join('[redacted]') : text);

  async function attempt(url: string, body: string, signal?: AbortSignal): Promise<Attempt> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let response: Response;
    let text: string;
    try {
      response = await doFetch(url, { method: 'POST', headers: options.headers, body, signal: combined });
      text = await response.text();
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (timeout.aborted) {
        // Not retried: a model too slow once is likely too slow again, and waiting twice helps nobody.
        return {
          error: new LlmError('timeout', `${label}: no reply within ${timeoutMs} ms`),
          retryable: false,
        };
      }
      const message = `${label}: request failed: ${redact(describeNetworkError(err))}`;
      return { error: new LlmError('network', message), retryable: true };
    }
    const { status } = response;
    if (response.ok) {
      try {
        return { data: JSON.parse(text) };
      } catch {
        const message = `${label}: HTTP ${status} reply is not JSON`;
        return { error: new LlmError('bad_response', message, { status }), retryable: false };
      }
    }
    const kind = status === 429 ? 'rate_limited' : 'provider_error';
    const error = new LlmError(kind, `${label}: HTTP ${status}: ${redact(errorDetail(text))}`, { status });
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    return { error, retryable, retryAfterMs: parseRetryAfter(response.headers) };
  }

  return async (url, body, signal) => {
    const payload = JSON.stringify(body);
    for (let n = 0; ; n++) {
      const result = await limiter.run(() => attempt(url, payload, signal), signal);
      if ('data' in result) return result.data;
      if (!result.retryable || n >= maxRetries) throw result.error;
      await wait(result.retryAfterMs ?? backoffMs(n), signal);
    }
  };
}

/** The provider's own error message (OpenAI, Anthropic and Ollama shapes), else the start of the body. */
function errorDetail(body: string): string {
  let detail = body.trim();
  try {
    const parsed: unknown = JSON.parse(body);
    if (isRecord(parsed)) {
      const { error } = parsed;
      if (isRecord(error) && typeof error.message === 'string') detail = error.message;
      else if (typeof error === 'string') detail = error;
      else if (typeof parsed.message === 'string') detail = parsed.message;
    }
  } catch {
    // Not JSON (a proxy's HTML page, say): the raw text is the best detail there is.
  }
  return detail.length > DETAIL_MAX_CHARS
    ? `${detail.slice(0, DETAIL_MAX_CHARS)}…`
    : detail || '(empty body)';
}

/** fetch's own message is just "fetch failed"; the useful part (ECONNREFUSED, DNS) is in the cause. */
function describeNetworkError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? err.cause.message : undefined;
  return cause ? `${err.message} (${cause})` : err.message;
}
