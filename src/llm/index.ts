import { createAnthropicModel } from './anthropic.js';
import type { LanguageModel } from './model.js';
import { createOpenAIModel } from './openai.js';

export { type AnthropicModelOptions, createAnthropicModel } from './anthropic.js';
export { LlmError, type LlmErrorKind } from './errors.js';
export { parseLaxJson } from './json-repair.js';
export type { ChatMessage, CompletionRequest, CompletionResult, LanguageModel } from './model.js';
export { createOpenAIModel, type OpenAIModelOptions } from './openai.js';

/** Which language model to use, as configured. */
export interface LanguageModelConfig {
  provider: 'openai' | 'anthropic' | 'none';
  baseUrl?: string | undefined;
  model?: string | undefined;
  apiKey?: string | undefined;
  timeoutMs?: number | undefined;
}

export const OPENAI_BASE_URL = 'https://api.openai.com/v1';
export const DEFAULT_OPENAI_MODEL = 'gpt-4.1-mini';
export const DEFAULT_ANTHROPIC_MODEL = 'claude-haiku-4-5';

/**
 * The configured language model, or null for provider `none`. Throws an Error naming the missing setting
 * when the configuration cannot work: no model for a self-hosted OpenAI-compatible server, no API key for
 * OpenAI itself or for Anthropic.
 */
export function createLanguageModel(config: LanguageModelConfig): LanguageModel | null {
  const { provider, apiKey, timeoutMs } = config;
  if (provider === 'none') return null;
  if (provider === 'anthropic') {
    if (!apiKey) throw new Error('LLM provider "anthropic" needs an API key: set "apiKey"');
    const model = config.model || DEFAULT_ANTHROPIC_MODEL;
    return createAnthropicModel({ baseUrl: config.baseUrl || undefined, model, apiKey, timeoutMs });
  }
  const baseUrl = config.baseUrl || OPENAI_BASE_URL;
  const official = baseUrl.replace(/\/+$/, '') === OPENAI_BASE_URL;
  // Only OpenAI itself has a model worth defaulting to; a local server serves whatever was pulled into it.
  const model = config.model || (official ? DEFAULT_OPENAI_MODEL : undefined);
  if (!model) throw new Error(`LLM provider "openai" at ${baseUrl} needs a model name: set "model"`);
  if (official && !apiKey)
    throw new Error(`LLM provider "openai" at ${baseUrl} needs an API key: set "apiKey"`);
  return createOpenAIModel({ baseUrl, model, apiKey, timeoutMs });
}
