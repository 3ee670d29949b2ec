import { LlmError } from './errors.js';
import { createJsonPoster } from './http.js';
import type { RetryWaits } from '../net/retry.js';
import type { CompletionRequest, CompletionResult, LanguageModel } from './model.js';
import { isRecord, tokenCount } from './reply.js';
import { completeWithJson, schemaName } from './structured.js';

/** Settings of the Anthropic Messages API. */
export interface AnthropicModelOptions extends RetryWaits {
  /** Without the version path; default `https://api.anthropic.com`. */
  baseUrl?: string | undefined;
  model: string;
  apiKey: string;
  /** Per attempt; default 120 s. */
  timeoutMs?: number | undefined;
  /** Retries after 408/409/429/5xx (529 overloaded included) and network errors; default 2. */
  maxRetries?: number | undefined;
  /** Requests in flight at once for this instance; default 4. */
  concurrency?: number | undefined;
  fetch?: typeof fetch | undefined;
}

/** Used when the request sets no `maxTokens`: the API requires a value. */
const DEFAULT_MAX_TOKENS = 1024;

/** A language model behind `POST {baseUrl}/v1/messages`; structured output goes through one forced tool. */
export function createAnthropicModel(options: AnthropicModelOptions): LanguageModel {
  const base = (options.baseUrl ?? 'https://api.anthropic.com').replace(/\/+$/, '');
  const url = `${base}/v1/messages`;
  const headers = {
    'content-type': 'application/json',
    'x-api-key': options.apiKey,
    'anthropic-version': '2023-06-01',
  };
  const post = createJsonPoster({ ...options, label: 'anthropic', headers, secret: options.apiKey });

  const send = async (request: CompletionRequest): Promise<CompletionResult> =>
    readMessage(await post(url, requestBody(options.model, request), request.signal), options.model);
  return {
    provider: 'anthropic',
    model: options.model,
    complete: (request) => completeWithJson(send, request),
  };
}

function requestBody(model: string, request: CompletionRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model,
    max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS,
    messages: request.messages,
  };
  if (request.system) body.system = request.system;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.jsonSchema) {
    const name = schemaName(request.jsonSchema.name);
    body.tools = [
      { name, description: `Record the ${name} result.`, input_schema: request.jsonSchema.schema },
    ];
    body.tool_choice = { type: 'tool', name };
  }
  return body;
}

function readMessage(data: unknown, fallbackModel: string): CompletionResult {
  if (!isRecord(data) || !Array.isArray(data.content)) {
    throw new LlmError('bad_response', 'anthropic: reply has no content array');
  }
  const blocks = data.content.filter(isRecord);
  const tool = blocks.find((b) => b.type === 'tool_use');
  const text = blocks
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('');
  const usage = isRecord(data.usage) ? data.usage : {};
  const result: CompletionResult = {
    // The tool input is the answer; as text it stays useful to callers that only read `text`.
    text: tool ? JSON.stringify(tool.input ?? null) : text,
    usage: { inputTokens: tokenCount(usage.input_tokens), outputTokens: tokenCount(usage.output_tokens) },
    model: typeof data.model === 'string' ? data.model : fallbackModel,
  };
  if (tool && isRecord(tool.input)) result.json = tool.input;
  return result;
}
