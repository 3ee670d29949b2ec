import { createHash } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { AppError } from '../core/errors.js';
import type { AppEnv } from './env.js';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * A request still in progress after this long was cut off (its process was killed): its key is
 * taken over by the retry instead of answering 409 until the key expires.
 */
export const IN_FLIGHT_LIMIT_MS = 10 * 60_000;

/** What a retry must repeat exactly to be the same request. */
export const requestHash = (method: string, path: string, body: string) =>
  createHash('sha256').update(`${method} ${path}\n${body}`).digest('hex');

/**
 * `Idempotency-Key` on a write: the first successful answer is kept for a day and replayed for a
 * retry of the same request; a concurrent duplicate is 409; the same key with a different
 * request is 422. A failed request stored nothing, so its key is released for the retry; a
 * request cut off by a crash holds its key for IN_FLIGHT_LIMIT_MS at most.
 */
export const idempotency: MiddlewareHandler<AppEnv> = async (c, next) => {
  const key = c.req.header('idempotency-key');
  const auth = c.get('auth');
  if (!key || !auth || !WRITES.has(c.req.method)) return next();
  if (key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) {
    throw new AppError('validation_error', 'Idempotency-Key must be 1-255 printable ASCII characters');
  }
  const store = c.get('services').store;
  const body = await c.req.text();
  const hash = requestHash(c.req.method, c.req.path, body);
  const claim = await store.claimIdempotencyKey(auth.projectId, key, hash, IN_FLIGHT_LIMIT_MS);
  if (claim.state === 'done') {
    c.header('Idempotent-Replayed', 'true');
    return c.json(claim.response as object, claim.status as 200);
  }
  if (claim.state === 'in_progress') {
    throw new AppError('conflict', 'a request with this Idempotency-Key is still in progress; retry later', {
      headers: { 'Retry-After': '1' },
    });
  }
  if (claim.state === 'mismatch') {
    throw new AppError('idempotency_mismatch', 'this Idempotency-Key was used for a different request');
  }
  try {
    await next();
  } catch (err) {
    await store.releaseIdempotencyKey(auth.projectId, key);
    throw err;
  }
  // Read-only answers (Recall, Reflect) are never kept: they may hold an encrypted bank's text.
  const readOnly = c.get('action') === 'memories.recall' || c.get('action') === 'reflect';
  if (c.res.status < 300 && !readOnly) {
    const response = await c.res
      .clone()
      .json()
      .catch(() => null);
    await store.saveIdempotentResponse(auth.projectId, key, c.res.status, response);
  } else {
    await store.releaseIdempotencyKey(auth.projectId, key);
  }
};
