/** The stable error codes of the API and their HTTP status. */
export const ERROR_STATUS = {
  validation_error: 400,
  query_too_long: 400,
  master_key_missing: 400,
  unauthenticated: 401,
  forbidden: 403,
  host_not_allowed: 403,
  origin_not_allowed: 403,
  not_found: 404,
  conflict: 409,
  idempotency_mismatch: 409,
  already_done: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  llm_required: 422,
  rate_limited: 429,
  internal: 500,
  llm_error: 502,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetail {
  path: string;
  message: string;
}

/** The one error class. Core, store and API throw it; one handler renders it. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: ErrorDetail[];
  readonly extra?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { details?: ErrorDetail[]; extra?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = opts.details;
    this.extra = opts.extra;
    this.headers = opts.headers;
  }
}

export const notFound = (what: string) => new AppError('not_found', `${what} not found`);
export const invalid = (path: string, message: string) =>
  new AppError('validation_error', message, { details: [{ path, message }] });
