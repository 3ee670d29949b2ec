/**
 * A fake OpenAI-compatible server speaking the real wire protocol, for tests of anything that calls
 * `/v1/chat/completions` or `/v1/embeddings`.
 *
 * ```ts
 * const fake = await startFakeOpenAI({ dimensions: 8 });
 * const model = createOpenAIModel({ baseUrl: fake.url, model: 'test-model' });
 * fake.respond((body, n) => (n === 0 ? openAIError(429, 'slow down') : { content: '{"ok": true}' }));
 * // ... exercise the code, then inspect fake.requests[i].body / .headers
 * await fake.close();
 * ```
 *
 * Defaults without a handler: chat completions echo the last user message (`echo: <text>`); embeddings
 * are deterministic bag-of-words vectors (see `fakeEmbedding`); `GET /v1/models` lists the fake model;
 * anything else is a 404 in OpenAI's error shape. Requests missing `model`/`messages`/`input` get a 400.
 */
import { createHash } from 'node:crypto';
import {
  type FakeHandler,
  type FakeReply,
  type FakeServer,
  type RecordedRequest,
  contentText,
  lastUserText,
  startFakeHttp,
  tokens,
} from './fake-http.js';

export type { FakeHandler, FakeReply, RecordedRequest } from './fake-http.js';

/** A handler's reply; besides the raw `FakeReply` fields, `content` sets just the assistant's text. */
export interface OpenAIReply extends FakeReply {
  content?: string;
}

export interface FakeOpenAIOptions {
  /** Embedding size when the request gives no `dimensions`; default 64. */
  dimensions?: number;
  handler?: FakeHandler<OpenAIReply>;
}

/** A running fake; `url` ends with `/v1`, ready to be a client's base URL. */
export type FakeOpenAI = FakeServer<OpenAIReply>;

const FAKE_MODEL = 'fake-model';

/** Starts a fake OpenAI-compatible server on 127.0.0.1 with a random port. */
export function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const dimensions = options.dimensions ?? 64;
  return startFakeHttp<OpenAIReply>((request, reply) => buildReply(request, reply, dimensions), {
    urlPath: '/v1',
    handler: options.handler,
  });
}

/** An error reply in OpenAI's shape: `{error: {message, type, param, code}}`. */
export function openAIError(status: number, message: string, type = errorType(status)): OpenAIReply {
  return { status, json: { error: { message, type, param: null, code: null } } };
}

/** A complete `chat.completion` body. */
export function chatCompletion(
  content: string,
  model: string,
  usage = { prompt_tokens: 1, completion_tokens: tokens(content) },
): Record<string, unknown> {
  return {
    id: `chatcmpl-${createHash('sha1').update(content).digest('hex').slice(0, 12)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

/**
 * The fake's embedding of `text`: the normalized sum of one pseudo-random vector per lower-cased word,
 * so texts sharing words have a higher cosine similarity and equal texts get equal vectors.
 */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [text];
  const sum = new Array<number>(dimensions).fill(0);
  for (const word of words) {
    const vector = wordVector(word, dimensions);
    for (let d = 0; d < dimensions; d++) sum[d]! += vector[d]!;
  }
  const norm = Math.hypot(...sum) || 1;
  return sum.map((x) => x / norm);
}

/** Components in [-1, 1) from as many SHA-256 blocks of the word as the size needs (8 per block). */
function wordVector(word: string, dimensions: number): number[] {
  const blocks: Buffer[] = [];
  for (let b = 0; b * 8 < dimensions; b++) blocks.push(createHash('sha256').update(`${b}:${word}`).digest());
  const bytes = Buffer.concat(blocks);
  return Array.from({ length: dimensions }, (_, d) => bytes.readInt32LE(d * 4) / 2 ** 31);
}

function buildReply(request: RecordedRequest, reply: OpenAIReply | undefined, dimensions: number): FakeReply {
  if (reply?.json !== undefined || reply?.raw !== undefined) return reply;
  const { method, path, body } = request;
  const route = `${method} ${path}`;
  const invalid = validate(route, body);
  if (invalid) return openAIError(400, invalid);
  if (reply?.status !== undefined && reply.status >= 400) {
    return { ...reply, ...openAIError(reply.status, `fake error ${reply.status}`) };
  }
  if (route === 'POST /v1/chat/completions') {
    const content = reply?.content ?? `echo: ${lastUserText(body.messages)}`;
    const prompt = body.messages.reduce(
      (n: number, m: { content: unknown }) => n + tokens(contentText(m.content)),
      0,
    );
    const json = chatCompletion(content, body.model, {
      prompt_tokens: prompt,
      completion_tokens: tokens(content),
    });
    return { ...reply, json };
  }
  if (route === 'POST /v1/embeddings') return { ...reply, json: embeddings(body, dimensions) };
  if (route === 'GET /v1/models') {
    return {
      ...reply,
      json: { object: 'list', data: [{ id: FAKE_MODEL, object: 'model', owned_by: 'fake' }] },
    };
  }
  return { ...reply, ...openAIError(404, `Unknown request URL: ${route}`, 'invalid_request_error') };
}

function validate(route: string, body: any): string | undefined {
  if (route !== 'POST /v1/chat/completions' && route !== 'POST /v1/embeddings') return undefined;
  if (typeof body?.model !== 'string') return 'you must provide a model parameter';
  if (route === 'POST /v1/chat/completions' && !Array.isArray(body.messages)) {
    return "Missing required parameter: 'messages'.";
  }
  if (route === 'POST /v1/embeddings' && body.input === undefined)
    return "Missing required parameter: 'input'.";
  return undefined;
}

function embeddings(body: any, defaultDimensions: number): Record<string, unknown> {
  const inputs: string[] = Array.isArray(body.input) ? body.input : [body.input];
  const dimensions = typeof body.dimensions === 'number' ? body.dimensions : defaultDimensions;
  const data = inputs.map((input, index) => {
    const vector = fakeEmbedding(String(input), dimensions);
    const embedding =
      body.encoding_format === 'base64'
        ? Buffer.from(new Float32Array(vector).buffer).toString('base64')
        : vector;
    return { object: 'embedding', index, embedding };
  });
  const promptTokens = inputs.reduce((n, input) => n + tokens(String(input)), 0);
  return {
    object: 'list',
    data,
    model: body.model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}

function errorType(status: number): string {
  if (status === 401) return 'invalid_api_key';
  if (status === 429) return 'rate_limit_exceeded';
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}
