import { LlmError } from './errors.js';
import { createJsonPoster } from './http.js';
import type { RetryWaits } from '../net/retry.js';
import type { CompletionRequest, CompletionResult, LanguageModel } from './model.js';
import { isRecord, tokenCount } from './reply.js';
import { completeWithJson, schemaName } from './structured.js';

/** Settings of an OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, LM Studio, ...). */
export interface OpenAIModelOptions extends RetryWaits {
  /** Up to and including the version, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`. */
  baseUrl: string;
  model: string;
  /** Sent as a bearer token; local servers usually need none. */
  apiKey?: string | undefined;
  /** Per attempt; default 120 s. */
  timeoutMs?: number | undefined;
  /** Retries after 408/409/429/5xx and network errors; default 2. */
  maxRetries?: number | undefined;
  /** Requests in flight at once for this instance; default 4. */
  concurrency?: number | undefined;
  fetch?: typeof fetch | undefined;
}

/**
 * Request features that some compatible servers or models reject. Each is switched for good the first
 * time the server says so, so later calls do not pay for the failed attempt again.
 */
interface Compat {
  /** `response_format: json_object` with the schema in the prompt, instead of `json_schema`. */
  jsonObject: boolean;
  /** Newer OpenAI models take `max_completion_tokens` and refuse `max_tokens`. */
  maxCompletionTokens: boolean;
  /** Reasoning models refuse any temperature but the default. */
  noTemperature: boolean;
}

/** A language model behind `POST {baseUrl}/chat/completions`. */
export function createOpenAIModel(options: OpenAIModelOptions): LanguageModel {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  const post = createJsonPoster({ ...options, label: 'openai', headers, secret: options.apiKey });
  const compat: Compat = { jsonObject: false, maxCompletionTokens: false, noTemperature: false };

  const send = async (request: CompletionRequest): Promise<CompletionResult> => {
    for (;;) {
      const used = { ...compat };
      try {
        const data = await post(url, requestBody(options.model, request, used), request.signal);
        return readCompletion(data, options.model);
      } catch (err) {
        if (!adapt(err, request, used, compat)) throw err;
      }
    }
  };
  return { provider: 'openai', model: options.model, complete: (request) => completeWithJson(send, request) };
}

/** Switches off what a 400 complains about; false when there is nothing (left) to switch. */
function adapt(err: unknown, request: CompletionRequest, used: Compat, compat: Compat): boolean {
  if (!(err instanceof LlmError) || err.status !== 400) return false;
  // Flags are compared with what this request used: a concurrent call may have switched them already.
  if (request.jsonSchema && !used.jsonObject && /response_format|json_schema/i.test(err.message)) {
    compat.jsonObject = true;
    return true;
  }
  if (
    request.maxTokens !== undefined &&
    !used.maxCompletionTokens &&
    /max_completion_tokens/.test(err.message)
  ) {
    compat.maxCompletionTokens = true;
    return true;
  }
  if (request.temperature !== undefined && !used.noTemperature && /temperature/i.test(err.message)) {
    compat.noTemperature = true;
    return true;
  }
  return false;
}

function requestBody(model: string, request: CompletionRequest, compat: Compat): Record<string, unknown> {
  const { jsonSchema } = request;
  let system = request.system ?? '';
  if (jsonSchema && compat.jsonObject) {
    // json_object mode only promises some JSON, so the schema has to travel in the prompt.
    const instruction = `Reply with only a JSON object matching this JSON Schema:\n${JSON.stringify(jsonSchema.schema)}`;
    system = system ? `${system}\n\n${instruction}` : instruction;
  }
  const messages = system ? [{ role: 'system', content: system }, ...request.messages] : request.messages;
  const body: Record<string, unknown> = { model, messages };
  if (request.maxTokens !== undefined) {
    body[compat.maxCompletionTokens ? 'max_completion_tokens' : 'max_tokens'] = request.maxTokens;
  }
  if (request.temperature !== undefined && !compat.noTemperature) body.temperature = request.temperature;
  if (jsonSchema) {
    body.response_format = compat.jsonObject
      ? { type: 'json_object' }
      : {
          type: 'json_schema',
          // Not strict: strict mode rejects most schemas that were not written for it.
          json_schema: { name: schemaName(jsonSchema.name), schema: jsonSchema.schema, strict: false },
        };
  }
  return body;
}

function readCompletion(data: unknown, fallbackModel: string): CompletionResult {
  const choice = isRecord(data) && Array.isArray(data.choices) ? data.choices[0] : undefined;
  const message = isRecord(choice) ? choice.message : undefined;
  if (!isRecord(data) || !isRecord(message)) {
    throw new LlmError('bad_response', 'openai: reply has no choices[0].message');
  }
  if (typeof message.content !== 'string' && typeof message.refusal === 'string') {
    throw new LlmError('bad_response', `openai: model refused: ${message.refusal}`);
  }
  const usage = isRecord(data.usage) ? data.usage : {};
  return {
    text: typeof message.content === 'string' ? message.content : '',
    usage: {
      inputTokens: tokenCount(usage.prompt_tokens),
      outputTokens: tokenCount(usage.completion_tokens),
    },
    model: typeof data.model === 'string' ? data.model : fallbackModel,
  };
}
