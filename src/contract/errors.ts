import { ERROR_STATUS, type ErrorCode } from './vocabulary.js';

export interface ErrorDetail {
  path: string;
  message: string;
}

/**
 * The one error class. Core, store and API throw it; one handler renders it. It lives beside the
 * codes it carries so that every layer (the store included, which must not import core) can
 * raise a contract error. Not exported from `index.ts`: the SDK has its own error classes.
 */
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
