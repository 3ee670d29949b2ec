/** What went wrong with a language model call; callers branch on this, not on messages. */
export type LlmErrorKind = 'timeout' | 'rate_limited' | 'provider_error' | 'bad_response' | 'network';

/**
 * The one error type thrown by the language model providers (a caller's own abort is rethrown as is).
 * Messages never contain the API key: transport errors are redacted before this is built.
 */
export class LlmError extends Error {
  override readonly name = 'LlmError';
  readonly kind: LlmErrorKind;
  /** HTTP status of the provider's reply, when there was one. */
  readonly status?: number;

  constructor(kind: LlmErrorKind, message: string, options: { status?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    if (options.status !== undefined) this.status = options.status;
  }
}
