import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { LlmError } from '../../llm/errors.js';
import type { ChatMessage, CompletionResult, LanguageModel } from '../../llm/model.js';
import { AppError, invalid } from '../errors.js';

// Not strict: client schemas carry keywords (titles, examples, vendor extensions) that only
// describe; unknown formats are accepted rather than refused.
const OPTIONS = { allErrors: true, strict: false, validateFormats: false } as const;

/**
 * Schemas one ajv instance compiles before it is replaced. An instance keeps a reference to
 * every schema and function it ever compiled (in its code-generation scope, whatever
 * `removeSchema` says), so one shared for the life of the process grew with every Reflect;
 * a new one costs ~20 ms, here once per 100 schemas, and what it holds is bounded (at most
 * 100 schemas of at most 8 KB).
 */
const COMPILES_PER_INSTANCE = 100;
const compilers = {
  draft7: { make: () => new Ajv(OPTIONS), ajv: null as Ajv | null, compiled: 0 },
  draft2020: { make: () => new Ajv2020(OPTIONS), ajv: null as Ajv | null, compiled: 0 },
};

function compilerFor(kind: keyof typeof compilers): Ajv {
  const c = compilers[kind];
  if (!c.ajv || c.compiled >= COMPILES_PER_INSTANCE) {
    c.ajv = c.make();
    c.compiled = 0;
  }
  c.compiled++;
  return c.ajv;
}

/**
 * Compiles a request's `response_schema` before any model is called: a schema that is not
 * valid JSON Schema (draft-07, or 2020-12 when its `$schema` says so) is the caller's 400.
 * The compiled schema is removed again: ajv would otherwise refuse a later schema of another
 * request, or another tenant, with the same `$id`. Only a schema it added is removed: one
 * refused for claiming a meta-schema's `$id` must not take that meta-schema with it.
 */
export function compileResponseSchema(schema: Record<string, unknown>): ValidateFunction {
  const ajv = compilerFor(
    typeof schema.$schema === 'string' && schema.$schema.includes('2020-12') ? 'draft2020' : 'draft7',
  );
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema);
  } catch (err) {
    throw invalid('response_schema', `not a usable JSON schema: ${(err as Error).message}`);
  }
  ajv.removeSchema(schema);
  return validate;
}

function describe(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`)
    .join('; ');
}

export interface StructuredAnswer {
  value: unknown;
  usage: { inputTokens: number; outputTokens: number };
}

/**
 * Asks for JSON under the provider's structured output and validates it against the schema;
 * an answer that does not match gets one repair request quoting the errors, then a 502.
 */
export async function completeStructured(
  llm: LanguageModel,
  request: { system: string; messages: ChatMessage[]; maxTokens: number; temperature: number },
  schema: Record<string, unknown>,
  validate: ValidateFunction,
): Promise<StructuredAnswer> {
  const jsonSchema = { name: 'reflect_response', schema };
  const usage = { inputTokens: 0, outputTokens: 0 };
  const add = (r: CompletionResult) => {
    usage.inputTokens += r.usage.inputTokens;
    usage.outputTokens += r.usage.outputTokens;
  };
  const first = await llm.complete({ ...request, jsonSchema });
  add(first);
  if (validate(first.json)) return { value: first.json, usage };
  const problems = describe(validate.errors);
  const second = await llm.complete({
    ...request,
    jsonSchema,
    messages: [
      ...request.messages,
      { role: 'assistant', content: first.text.trim() || JSON.stringify(first.json) },
      {
        role: 'user',
        content: `That JSON does not match the required schema: ${problems}. Reply again with only the corrected JSON value.`,
      },
    ],
  });
  add(second);
  if (validate(second.json)) return { value: second.json, usage };
  throw new AppError(
    'llm_error',
    `the language model's answer did not match response_schema, even after a repair request: ${describe(validate.errors)}`,
  );
}

/** A provider failure as the API's 502; the provider's message never carries credentials. */
export function llmFailure(err: unknown): never {
  if (err instanceof LlmError)
    throw new AppError('llm_error', `language model request failed (${err.kind}): ${err.message}`);
  throw err;
}
