import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIUserAbortError,
  errorFromResponse,
} from './errors.js';

/** Per-call options, accepted as the last argument of every method. */
export interface RequestOptions {
  /** Aborts the call (and any retry wait) when it fires. */
  signal?: AbortSignal;
  /** Milliseconds per attempt before the call fails with `APIConnectionTimeoutError`. */
  timeout?: number;
  /** Retries after the first attempt; overrides the client's `maxRetries`. */
  maxRetries?: number;
  /**
   * The `Idempotency-Key` of a write; a random UUID when not given. Kept across retries. Reads
   * (Recall, Reflect, listings, gets) never send one.
   */
  idempotencyKey?: string;
  /** Extra request headers. */
  headers?: Record<string, string>;
}

export type Query = Record<string, string | number | boolean | string[] | undefined | null>;

export interface TransportOptions {
  baseUrl: string;
  token: string | undefined;
  maxRetries: number;
  timeout: number;
  fetch: typeof fetch;
  headers: Record<string, string>;
  /** How a retry waits (`ClientOptions.sleep`); `sleep` below unless a test gives its own. */
  sleep: Sleep;
}

/** Waits `ms` before the next attempt; rejects with `APIUserAbortError` when `signal` fires. */
export type Sleep = (ms: number, signal: AbortSignal | undefined) => Promise<void>;

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Longest server-requested wait that is honoured; beyond it the client's own backoff applies. */
const MAX_HEADER_DELAY_MS = 60_000;
const INITIAL_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;

/** 408, 409 (lock or replay races), 429 and every 5xx are worth another attempt. */
export const isRetryableStatus = (status: number) =>
  status === 408 || status === 409 || status === 429 || status >= 500;

/**
 * 409 codes that are final answers about the Idempotency-Key: another attempt with the same key
 * gets the same answer (`idempotency_mismatch`: the key was used for a different request;
 * `already_done`: the request ran and its answer held a secret that is shown only once).
 */
export const FINAL_CONFLICTS: ReadonlySet<string> = new Set(['idempotency_mismatch', 'already_done']);

/** Whether a response is worth another attempt: its status, unless its error code says it is final. */
export function isRetryable(status: number, body: unknown): boolean {
  if (!isRetryableStatus(status)) return false;
  const code = (body as { error?: { code?: unknown } } | null)?.error?.code;
  return !(status === 409 && typeof code === 'string' && FINAL_CONFLICTS.has(code));
}

/**
 * How long the server asked us to wait: `Retry-After-Ms`, `Retry-After` (seconds or an HTTP
 * date) or `RateLimit-Reset` (seconds from now). Undefined when absent or out of range.
 */
export function serverDelayMs(headers: Headers, now = Date.now()): number | undefined {
  const candidates: number[] = [];
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') candidates.push(Number(ms));
  const after = headers.get('retry-after');
  if (after !== null && after.trim() !== '') {
    const seconds = Number(after);
    candidates.push(Number.isFinite(seconds) ? seconds * 1000 : Date.parse(after) - now);
  }
  const reset = headers.get('ratelimit-reset');
  if (reset !== null && reset.trim() !== '') candidates.push(Number(reset) * 1000);
  // A date in the past means "now"; a wait beyond the cap is left to the client's backoff.
  const usable = candidates.filter((d) => Number.isFinite(d) && d <= MAX_HEADER_DELAY_MS);
  return usable.length ? Math.max(0, usable[0]!) : undefined;
}

/** Exponential backoff (0.5 s, 1 s, 2 s ... capped at 8 s) minus up to 25 % jitter. */
export function backoffMs(attempt: number): number {
  const base = Math.min(MAX_DELAY_MS, INITIAL_DELAY_MS * 2 ** attempt);
  return base * (1 - Math.random() * 0.25);
}

/** The real wait: a timer, cut short by the caller's signal. */
export const sleep: Sleep = (ms, signal) => {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new APIUserAbortError('request aborted'));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new APIUserAbortError('request aborted'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
};

function encodeQuery(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    params.set(key, Array.isArray(value) ? value.join(',') : String(value));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** One HTTP call: authentication, JSON, timeouts, retries and error mapping. */
export class Transport {
  constructor(readonly options: TransportOptions) {}

  async request<T>(
    method: string,
    path: string,
    init: {
      query?: Query;
      body?: unknown;
      options?: RequestOptions;
      /** The action only reads (the contract's catalogue says so): no Idempotency-Key. */
      read?: boolean;
      /** A success answers bytes (a download): returned as they came, never parsed. */
      binary?: boolean;
    } = {},
  ): Promise<T> {
    const opts = init.options ?? {};
    const maxRetries = opts.maxRetries ?? this.options.maxRetries;
    const timeout = opts.timeout ?? this.options.timeout;
    const url = `${this.options.baseUrl}${path}${encodeQuery(init.query)}`;
    const headers: Record<string, string> = { accept: 'application/json', ...this.options.headers };
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    // A file upload goes as the FormData it is (fetch writes its multipart type and boundary).
    const form = typeof FormData !== 'undefined' && init.body instanceof FormData ? init.body : null;
    if (init.body !== undefined && !form) headers['content-type'] = 'application/json';
    // A read (GET, or a POST that only reads such as Recall) has nothing to replay: a key would
    // only make the server store an answer no retry needs.
    if (WRITE_METHODS.has(method) && !init.read) {
      headers['idempotency-key'] = opts.idempotencyKey ?? crypto.randomUUID();
    }
    Object.assign(headers, opts.headers);
    const body = form ?? (init.body === undefined ? undefined : JSON.stringify(init.body));

    for (let attempt = 0; ; attempt++) {
      let res: Response;
      let parsed: unknown;
      try {
        const signals = [AbortSignal.timeout(timeout)];
        if (opts.signal) signals.push(opts.signal);
        res = await this.options.fetch(url, { method, headers, body, signal: AbortSignal.any(signals) });
        parsed = init.binary && res.ok ? new Uint8Array(await res.arrayBuffer()) : await readBody(res);
      } catch (cause) {
        if (opts.signal?.aborted) throw new APIUserAbortError('request aborted', { cause });
        const timedOut = cause instanceof Error && cause.name === 'TimeoutError';
        const err = timedOut
          ? new APIConnectionTimeoutError(`no response from ${method} ${path} within ${timeout} ms`, {
              code: 'timeout',
              cause,
            })
          : new APIConnectionError(
              `cannot reach ${this.options.baseUrl}: ${(cause as Error)?.message ?? cause}`,
              {
                code: 'connection_error',
                cause,
              },
            );
        if (attempt >= maxRetries) throw err;
        await this.options.sleep(backoffMs(attempt), opts.signal);
        continue;
      }
      if (res.ok) return parsed as T;
      if (isRetryable(res.status, parsed) && attempt < maxRetries) {
        await this.options.sleep(serverDelayMs(res.headers) ?? backoffMs(attempt), opts.signal);
        continue;
      }
      throw errorFromResponse(res.status, res.headers, parsed);
    }
  }
}
