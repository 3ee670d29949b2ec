/** A chat message for a language model. */
export interface ChatMessage {
  role: 'user' | 'assistant';
  content: string;
}

export interface CompletionRequest {
  system?: string;
  messages: ChatMessage[];
  /** When given, the model is asked for JSON matching this schema and the answer is parsed (with repair). */
  jsonSchema?: { name: string; schema: Record<string, unknown> };
  maxTokens?: number;
  temperature?: number;
  signal?: AbortSignal;
}

export interface CompletionResult {
  text: string;
  /** Parsed JSON when `jsonSchema` was requested. */
  json?: unknown;
  usage: { inputTokens: number; outputTokens: number };
  model: string;
}

/** A configured language model provider (OpenAI-compatible or Anthropic). */
export interface LanguageModel {
  readonly provider: 'openai' | 'anthropic';
  readonly model: string;
  complete(request: CompletionRequest): Promise<CompletionResult>;
}
