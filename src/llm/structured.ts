import { LlmError } from './errors.js';
import { parseLaxJson } from './json-repair.js';
import type { CompletionRequest, CompletionResult } from './model.js';

/** One round trip to a provider. `json` is set only when the provider returned the value already parsed. */
export type SendOnce = (request: CompletionRequest) => Promise<CompletionResult>;

/**
 * Completes `request`; when JSON was asked for, parses the answer (repairing it locally if needed) and,
 * failing that, makes one follow-up call asking the model to fix its reply.
 */
export async function completeWithJson(
  send: SendOnce,
  request: CompletionRequest,
): Promise<CompletionResult> {
  const first = await send(request);
  if (!request.jsonSchema) return first;
  const parsed = parseReply(first);
  if (parsed.ok) return { ...first, json: parsed.value };

  const retry = await send({
    ...request,
    messages: [
      ...request.messages,
      // Providers reject empty messages; the model still needs to see that it answered.
      { role: 'assistant', content: first.text.trim() || '(empty reply)' },
      { role: 'user', content: repairPrompt(request.jsonSchema.name) },
    ],
  });
  const usage = {
    inputTokens: first.usage.inputTokens + retry.usage.inputTokens,
    outputTokens: first.usage.outputTokens + retry.usage.outputTokens,
  };
  const repaired = parseReply(retry);
  if (!repaired.ok) {
    const message = `model did not return valid JSON for "${request.jsonSchema.name}", even after a repair request`;
    throw new LlmError('bad_response', message);
  }
  return { ...retry, json: repaired.value, usage };
}

/** Providers restrict schema and tool names to `[A-Za-z0-9_-]{1,64}`. */
export function schemaName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'result';
}

function parseReply(result: CompletionResult): { ok: true; value: unknown } | { ok: false } {
  if (result.json !== undefined) return { ok: true, value: result.json };
  try {
    return { ok: true, value: parseLaxJson(result.text) };
  } catch (err) {
    if (err instanceof LlmError) return { ok: false };
    throw err;
  }
}

function repairPrompt(name: string): string {
  return (
    `Your previous reply could not be parsed as JSON. Reply again with only the JSON value for "${name}", ` +
    'matching the requested schema: no explanation, no code fences.'
  );
}
