import { AppError } from './errors.js';

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

/** The fixed window (aligned to the epoch, so UTC days) that `now` falls in. */
export function fixedWindow(now: Date, lengthMs: number): { start: Date; resetSeconds: number } {
  const start = Math.floor(now.getTime() / lengthMs) * lengthMs;
  return {
    start: new Date(start),
    resetSeconds: Math.max(1, Math.ceil((start + lengthMs - now.getTime()) / 1000)),
  };
}

/** The `RateLimit-*` headers (IETF draft: limit, remaining, seconds until the window resets). */
export function rateLimitHeaders(limit: number, used: number, resetSeconds: number): Record<string, string> {
  return {
    'RateLimit-Limit': String(limit),
    'RateLimit-Remaining': String(Math.max(0, limit - used)),
    'RateLimit-Reset': String(resetSeconds),
  };
}

/** The 429 of an exceeded limit, with `Retry-After` and the `RateLimit-*` headers. */
export function rateLimited(
  name: string,
  message: string,
  limit: number,
  used: number,
  retryAfterSeconds: number,
): AppError {
  return new AppError('rate_limited', message, {
    extra: { limit: name },
    headers: {
      'Retry-After': String(retryAfterSeconds),
      ...rateLimitHeaders(limit, used, retryAfterSeconds),
    },
  });
}
