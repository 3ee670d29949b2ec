import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ZodError } from 'zod';
import { AppError } from '../core/errors.js';
import type { AppEnv } from './env.js';

/** zod issues -> our `details` (`items.0.content`). */
export function zodDetails(err: Pick<ZodError, 'issues'>) {
  return err.issues.map((i) => ({ path: i.path.map(String).join('.') || '(body)', message: i.message }));
}

export function validationError(err: Pick<ZodError, 'issues'>): AppError {
  const details = zodDetails(err);
  const first = details[0];
  return new AppError('validation_error', first ? `${first.path}: ${first.message}` : 'invalid request', {
    details,
  });
}

/** Normalises anything thrown into an AppError; unknown errors become `internal` (logged, never shown). */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof HTTPException) {
    if (err.status === 413) return new AppError('payload_too_large', 'request body is too large');
    if (err.status === 415) {
      return new AppError(
        'unsupported_media_type',
        'request bodies must be JSON (Content-Type: application/json)',
      );
    }
    if (err.status === 400) return new AppError('validation_error', err.message || 'malformed request');
  }
  if (err && typeof err === 'object' && 'issues' in err && Array.isArray((err as ZodError).issues)) {
    return validationError(err as ZodError);
  }
  return new AppError('internal', 'internal error');
}

/** Renders the error body of decisions.md; the only place error JSON is written. */
export function renderError(c: Context<AppEnv>, err: unknown): Response {
  const e = toAppError(err);
  const requestId = c.get('requestId') ?? 'unknown';
  if (e.code === 'internal') c.get('log')?.error({ err, requestId }, 'unhandled error');
  for (const [k, v] of Object.entries(e.headers ?? {})) c.header(k, v);
  return c.json(
    {
      error: {
        code: e.code,
        message: e.message,
        ...(e.details ? { details: e.details } : {}),
        request_id: requestId,
        ...(e.extra ?? {}),
      },
    },
    e.status as 400,
  );
}
