/**
 * A fake Anthropic Messages API speaking the real wire protocol, for tests of anything that calls
 * `POST /v1/messages`.
 *
 * ```ts
 * const fake = await startFakeAnthropic();
 * const model = createAnthropicModel({ baseUrl: fake.url, model: 'test-model', apiKey: 'k' });
 * fake.respond((body, n) => (n === 0 ? anthropicError(529, 'overloaded_error', 'busy') : { text: 'hi' }));
 * await fake.close();
 * ```
 *
 * Defaults without a handler: a text reply echoing the last user message (`echo: <text>`), or, when
 * the request forces a tool (`tool_choice: {type: 'tool'}`), a `tool_use` block with input `{}`.
 * Like the real API it answers 401 without `x-api-key`, 400 without `anthropic-version`, `model`,
 * `max_tokens` or `messages`, and 404 for other paths, all in the `{type: 'error', error}` shape.
 */
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

/** A handler's reply; besides the raw `FakeReply` fields, `text` or `toolInput` set just the content. */
export interface AnthropicReply extends FakeReply {
  text?: string;
  /** Answer with a `tool_use` block carrying this input (named after the forced or first tool). */
  toolInput?: unknown;
  /** Default `end_turn`, or `tool_use` for tool replies. */
  stopReason?: string;
}

export interface FakeAnthropicOptions {
  handler?: FakeHandler<AnthropicReply>;
}

/** A running fake; `url` has no path, as the Anthropic base URL has none. */
export type FakeAnthropic = FakeServer<AnthropicReply>;

/** Starts a fake Anthropic server on 127.0.0.1 with a random port. */
export function startFakeAnthropic(options: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  return startFakeHttp<AnthropicReply>(buildReply, { handler: options.handler });
}

/** An error reply in Anthropic's shape: `{type: 'error', error: {type, message}}`. */
export function anthropicError(status: number, type: string, message: string): AnthropicReply {
  return { status, json: { type: 'error', error: { type, message } } };
}

function buildReply(request: RecordedRequest, reply: AnthropicReply | undefined): FakeReply {
  if (reply?.json !== undefined || reply?.raw !== undefined) return reply;
  const { method, path, headers, body } = request;
  if (method !== 'POST' || path !== '/v1/messages') {
    return anthropicError(404, 'not_found_error', `Not found: ${method} ${path}`);
  }
  if (!headers['x-api-key'])
    return anthropicError(401, 'authentication_error', 'x-api-key header is required');
  const invalid = validate(headers['anthropic-version'], body);
  if (invalid) return anthropicError(400, 'invalid_request_error', invalid);
  if (reply?.status !== undefined && reply.status >= 400) {
    return {
      ...reply,
      ...anthropicError(reply.status, errorType(reply.status), `fake error ${reply.status}`),
    };
  }
  return { ...reply, json: message(body, reply) };
}

function validate(version: string | string[] | undefined, body: any): string | undefined {
  if (!version) return 'anthropic-version: header is required';
  if (typeof body?.model !== 'string') return 'model: Field required';
  if (typeof body.max_tokens !== 'number') return 'max_tokens: Field required';
  if (!Array.isArray(body.messages)) return 'messages: Field required';
  return undefined;
}

function message(body: any, reply: AnthropicReply | undefined): Record<string, unknown> {
  const forced = body.tool_choice?.type === 'tool' ? body.tool_choice.name : undefined;
  const useTool = reply?.toolInput !== undefined || (forced !== undefined && reply?.text === undefined);
  const text = reply?.text ?? `echo: ${lastUserText(body.messages)}`;
  const content = useTool
    ? [
        {
          type: 'tool_use',
          id: 'toolu_fake',
          name: forced ?? body.tools?.[0]?.name,
          input: reply?.toolInput ?? {},
        },
      ]
    : [{ type: 'text', text }];
  const inputTokens = body.messages.reduce(
    (n: number, m: { content: unknown }) => n + tokens(contentText(m.content)),
    0,
  );
  return {
    id: `msg_fake_${Date.now().toString(36)}`,
    type: 'message',
    role: 'assistant',
    model: body.model,
    content,
    stop_reason: reply?.stopReason ?? (useTool ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    usage: { input_tokens: inputTokens, output_tokens: tokens(JSON.stringify(content)) },
  };
}

function errorType(status: number): string {
  const types: Record<number, string> = {
    400: 'invalid_request_error',
    401: 'authentication_error',
    403: 'permission_error',
    404: 'not_found_error',
    413: 'request_too_large',
    429: 'rate_limit_error',
    529: 'overloaded_error',
  };
  return types[status] ?? 'api_error';
}
