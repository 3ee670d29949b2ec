import type { Embedder } from './embedder.js';
import { backoffMs, parseRetryAfter, type RetryWaits, sleep } from '../net/retry.js';

/** Settings of `createOpenAIEmbedder`. */
export interface OpenAIEmbedderOptions extends RetryWaits {
  /**
   * Base URL of the API. Trailing slashes are ignored; a URL ending in `/embeddings` is used as is; one
   * ending in a version segment (`/v1`, `/v1beta`) gets `/embeddings`; any other gets `/v1/embeddings`.
   * So `http://localhost:11434`, `http://localhost:11434/v1` and `https://api.openai.com/v1` all work.
   */
  url: string;
  model: string;
  /** Sent as a bearer token; never appears in error messages. */
  apiKey?: string | undefined;
  /**
   * Vector size. When set it is sent as the request's `dimensions` (models that can shorten their
   * vectors, such as OpenAI's text-embedding-3, honour it) and every reply is checked against it. When
   * unset it is learnt from the first reply, and `id` and `dimensions` throw until then.
   */
  dimensions?: number | undefined;
  /** Per request attempt; default 60 s. A timeout is not retried. */
  timeoutMs?: number | undefined;
  /** Extra attempts after a 408, 429, 5xx or network failure; default 4. */
  maxRetries?: number | undefined;
  /** Texts per request; default 128. */
  batchSize?: number | undefined;
  fetch?: typeof fetch | undefined;
}

/** A failed embeddings request. The message names the endpoint and the provider's reason, never the key. */
export class EmbeddingError extends Error {
  override readonly name = 'EmbeddingError';
  /** HTTP status of the provider's reply, when there was one. */
  readonly status: number | undefined;

  constructor(message: string, status?: number) {
    super(message);
    this.status = status;
  }
}

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_RETRIES = 4;
const DEFAULT_BATCH_SIZE = 128;
const DETAIL_MAX_CHARS = 300;

type Attempt =
  | { reply: unknown }
  | { error: EmbeddingError; retryable: boolean; retryAfterMs?: number | undefined };

/**
 * An embedder for any server speaking OpenAI's `POST /v1/embeddings` (OpenAI, Ollama, vLLM, LM Studio,
 * llama.cpp, TEI...). Texts go in batches, one request at a time, so a large re-embed stays within rate
 * limits; 408, 429 and 5xx replies and network errors are retried with backoff, honouring `Retry-After`.
 * Vectors are scaled to unit length. Its id is `openai:<model>:<dimensions>`.
 */
export function createOpenAIEmbedder(opts: OpenAIEmbedderOptions): Embedder {
  const endpoint = embeddingsEndpoint(opts.url);
  const label = `embeddings (${opts.model} at ${displayUrl(endpoint)})`;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxRetries = opts.maxRetries ?? DEFAULT_MAX_RETRIES;
  const batchSize = opts.batchSize ?? DEFAULT_BATCH_SIZE;
  const doFetch = opts.fetch ?? fetch;
  const wait = opts.sleep ?? sleep;
  const apiKey = opts.apiKey || undefined;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  const redact = (text: string) => (apiKey ? text.split(apiKey).join('[redacted]') : text);
  let dimensions = opts.dimensions;

  function knownDimensions(): number {
    if (dimensions === undefined) {
      throw new Error(
        `${label}: dimensions are unknown until the first reply; configure them, or embed first`,
      );
    }
    return dimensions;
  }

  async function attempt(body: string, signal?: AbortSignal): Promise<Attempt> {
    const timeout = AbortSignal.timeout(timeoutMs);
    let response: Response;
    let text: string;
    try {
      const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
      response = await doFetch(endpoint, { method: 'POST', headers, body, signal: combined });
      text = await response.text();
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (timeout.aborted) {
        // A server too slow once is likely too slow again; retrying would multiply the wait.
        return { error: new EmbeddingError(`${label}: no reply within ${timeoutMs} ms`), retryable: false };
      }
      const error = new EmbeddingError(`${label}: request failed: ${redact(describeNetworkError(err))}`);
      return { error, retryable: true };
    }
    const { status } = response;
    if (response.ok) {
      try {
        return { reply: JSON.parse(text) };
      } catch {
        return {
          error: new EmbeddingError(`${label}: HTTP ${status} reply is not JSON`, status),
          retryable: false,
        };
      }
    }
    const error = new EmbeddingError(`${label}: HTTP ${status}: ${redact(errorDetail(text))}`, status);
    const retryable = status === 408 || status === 429 || status >= 500;
    return { error, retryable, retryAfterMs: parseRetryAfter(response.headers) };
  }

  async function embedBatch(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const body = JSON.stringify({
      model: opts.model,
      input: texts,
      ...(opts.dimensions ? { dimensions: opts.dimensions } : {}),
    });
    for (let retry = 0; ; retry++) {
      const result = await attempt(body, signal);
      if ('reply' in result) return readVectors(result.reply, texts.length);
      if (!result.retryable) throw result.error;
      if (retry >= maxRetries) {
        const { message, status } = result.error;
        throw new EmbeddingError(`${message} (gave up after ${retry + 1} attempts)`, status);
      }
      await wait(result.retryAfterMs ?? backoffMs(retry), signal);
    }
  }

  /** Checks a reply against the protocol and the known size, in input order, scaled to unit length. */
  function readVectors(reply: unknown, count: number): Float32Array[] {
    const bad = (why: string) => new EmbeddingError(`${label}: unexpected reply: ${why}`);
    const data = isRecord(reply) ? reply.data : undefined;
    if (!Array.isArray(data) || data.length !== count) throw bad(`expected "data" with ${count} embeddings`);
    const vectors = new Array<Float32Array>(count);
    for (const item of data) {
      const index = isRecord(item) && typeof item.index === 'number' ? item.index : -1;
      const embedding = isRecord(item) ? item.embedding : undefined;
      if (!Number.isInteger(index) || index < 0 || index >= count || vectors[index]) {
        throw bad('missing, repeated or out-of-range "index"');
      }
      if (!Array.isArray(embedding) || !embedding.every((x) => typeof x === 'number' && Number.isFinite(x))) {
        throw bad(`embedding ${index} is not an array of numbers`);
      }
      dimensions ??= embedding.length;
      if (embedding.length !== dimensions) {
        throw bad(`embedding ${index} has ${embedding.length} dimensions, expected ${dimensions}`);
      }
      const vector = unitVector(embedding as number[]);
      if (!vector) throw bad(`embedding ${index} is all zeros`);
      vectors[index] = vector;
    }
    return vectors;
  }

  return {
    get id() {
      return `openai:${opts.model}:${knownDimensions()}`;
    },
    get dimensions() {
      return knownDimensions();
    },
    async embed(texts, signal) {
      const vectors: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += batchSize) {
        vectors.push(...(await embedBatch(texts.slice(start, start + batchSize), signal)));
      }
      return vectors;
    },
  };
}

function embeddingsEndpoint(url: string): string {
  const base = url.trim().replace(/\/+$/, '');
  if (!URL.canParse(base)) throw new Error('the embeddings URL is not a valid URL');
  if (/\/embeddings$/i.test(base)) return base;
  if (/\/v\d+[a-z0-9]*$/i.test(base)) return `${base}/embeddings`;
  return `${base}/v1/embeddings`;
}

/** The endpoint without credentials or query, fit for error messages. */
function displayUrl(endpoint: string): string {
  const url = new URL(endpoint);
  return `${url.origin}${url.pathname}`;
}

function unitVector(values: number[]): Float32Array | undefined {
  let norm = 0;
  for (const x of values) norm += x * x;
  if (norm === 0) return undefined;
  const scale = 1 / Math.sqrt(norm);
  return Float32Array.from(values, (x) => x * scale);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Why the provider refused: `error.message` (OpenAI, vLLM), `error` or `message` (others), else the body. */
function errorDetail(body: string): string {
  let reply: unknown;
  try {
    reply = JSON.parse(body);
  } catch {
    reply = undefined; // a proxy's HTML page, say: the raw text is the best there is
  }
  const error = isRecord(reply) ? reply.error : undefined;
  const candidates = [isRecord(error) ? error.message : error, isRecord(reply) ? reply.message : undefined];
  const detail = (candidates.find((c): c is string => typeof c === 'string') ?? body).trim();
  if (!detail) return '(empty body)';
  return detail.length > DETAIL_MAX_CHARS ? `${detail.slice(0, DETAIL_MAX_CHARS)}…` : detail;
}

/** fetch's own message is just "fetch failed"; the useful part (ECONNREFUSED, DNS) is in its cause. */
function describeNetworkError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? err.cause.message : undefined;
  return cause ? `${err.message} (${cause})` : err.message;
}
