/** One entry of a validation error's `details`. */
export interface ErrorDetail {
  path: string;
  message: string;
}

interface ErrorInit {
  status?: number;
  code?: string;
  details?: ErrorDetail[];
  requestId?: string;
  headers?: Headers;
  body?: unknown;
  cause?: unknown;
}

/**
 * The base of every error the client throws. HTTP errors carry the server's stable `code`,
 * `details` and the request id (from the body, else the `X-Request-Id` header); connection
 * errors and timeouts have no `status`.
 */
export class MnemoError extends Error {
  readonly status: number | undefined;
  readonly code: string;
  readonly details: ErrorDetail[] | undefined;
  readonly requestId: string | undefined;
  readonly headers: Headers | undefined;
  /** The parsed response body, when there was one. */
  readonly body: unknown;

  constructor(message: string, init: ErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code ?? 'unknown';
    this.details = init.details;
    this.requestId = init.requestId;
    this.headers = init.headers;
    this.body = init.body;
  }
}

/** 400: a malformed request, named field by field in `details`. */
export class BadRequestError extends MnemoError {}
/** 401: missing, unknown, revoked or expired credentials. */
export class AuthenticationError extends MnemoError {}
/** 403: the key lacks a scope; `requiredScope` names it. */
export class PermissionDeniedError extends MnemoError {
  readonly requiredScope: string | undefined;
  constructor(message: string, init: ErrorInit & { requiredScope?: string } = {}) {
    super(message, init);
    this.requiredScope = init.requiredScope;
  }
}
/** 404: unknown route, bank, space, memory (or a bank of another project). */
export class NotFoundError extends MnemoError {}
/**
 * 409: the id exists, the bank is in another space, or the embedder differs; for an
 * Idempotency-Key, `idempotency_mismatch` (used for another request) or `already_done` (the
 * request ran and its answer held a secret; `body.error.id` names what was made).
 */
export class ConflictError extends MnemoError {}
/** 413: the body is over the server's limit (10 MB). */
export class PayloadTooLargeError extends MnemoError {}
/** 422: the request is well formed but cannot be served (e.g. `response_schema` without a model). */
export class UnprocessableEntityError extends MnemoError {}
/** 429: a project limit; retried automatically, thrown once retries are spent. */
export class RateLimitError extends MnemoError {}
/** 5xx: the server failed; retried automatically, thrown once retries are spent. */
export class InternalServerError extends MnemoError {}
/** The server could not be reached or the connection broke. */
export class APIConnectionError extends MnemoError {}
/** No response within the call's `timeout`. */
export class APIConnectionTimeoutError extends APIConnectionError {}
/** The caller's `signal` aborted the call. */
export class APIUserAbortError extends MnemoError {}

type ErrorClass = new (message: string, init: ErrorInit & { requiredScope?: string }) => MnemoError;

const BY_STATUS: Record<number, ErrorClass> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  422: UnprocessableEntityError,
  429: RateLimitError,
};

/** The error for an HTTP response, from mnemo's `{error: {code, message, details, request_id}}` body. */
export function errorFromResponse(status: number, headers: Headers, body: unknown): MnemoError {
  const err =
    body && typeof body === 'object' && 'error' in body && body.error && typeof body.error === 'object'
      ? (body.error as Record<string, unknown>)
      : {};
  const message = typeof err.message === 'string' ? err.message : `HTTP ${status}`;
  const Class: ErrorClass = BY_STATUS[status] ?? (status >= 500 ? InternalServerError : MnemoError);
  return new Class(message, {
    status,
    code: typeof err.code === 'string' ? err.code : `http_${status}`,
    details: Array.isArray(err.details) ? (err.details as ErrorDetail[]) : undefined,
    requestId:
      typeof err.request_id === 'string' ? err.request_id : (headers.get('x-request-id') ?? undefined),
    requiredScope: typeof err.required_scope === 'string' ? err.required_scope : undefined,
    headers,
    body,
  });
}
