import { createHash } from 'node:crypto';
import type { Context, Next } from 'hono';
import { actionSpec } from '../contract/actions.js';
import { AppError } from '../core/errors.js';
import { KEY_IN_TEXT } from '../core/projects.js';
import type { IdempotencyScope } from '../core/types.js';
import type { AppEnv, Auth } from './env.js';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

// Answers of read actions (Recall, Reflect: `read` in the catalogue) are never kept: repeating
// them changes nothing. Answers of `secret` actions (a minted API key) keep only their id, and a
// retry is answered 409 `already_done` with that id. Any other answer holding a whole API key is
// treated the same (`KEY_IN_TEXT`), so a new route cannot put one in the replay store by mistake.

/**
 * A request still in progress after this long was cut off (its process was killed): its key is
 * taken over by the retry instead of answering 409 until the key expires.
 */
export const IN_FLIGHT_LIMIT_MS = 10 * 60_000;

/**
 * What a retry must repeat exactly to be the same request: method, path with its query string
 * (as sent, still percent-encoded) and body.
 */
export const requestHash = (method: string, target: string, body: string) =>
  createHash('sha256').update(`${method} ${target}\n${body}`).digest('hex');

/** Who sent a key: keys of different callers of one project never meet. */
export const callerOf = (auth: Auth) =>
  auth.actor.type === 'key' ? `key:${auth.actor.keyId}` : auth.actor.type;

/** The path and query string of a request as sent. */
function target(url: string): string {
  const u = new URL(url);
  return u.pathname + u.search;
}

/** The bank a request is about, as its route validated it; null for routes of no bank. */
function bankOf(c: Context<AppEnv>): string | null {
  let bank: unknown;
  try {
    bank = (c.req as unknown as { valid(t: 'param'): { bank?: unknown } | undefined }).valid('param')?.bank;
  } catch {}
  if (typeof bank === 'string') return bank;
  return c.req.param('bank') ?? null;
}

/**
 * `Idempotency-Key` on a write, run by each route's guard after its scope check, so a replay
 * goes only to a caller allowed to make the request, and a key is one caller's: (project,
 * caller, key). The first successful answer is kept for a day and replayed for a retry of the
 * same request; a concurrent duplicate is 409 `conflict` (retry later); the same key with a
 * different request is 409 `idempotency_mismatch`; a retry of a request whose answer held a
 * secret is 409 `already_done` with the id. A failed request stored nothing, so its key is
 * released for the retry; a request cut off by a crash holds its key for IN_FLIGHT_LIMIT_MS at
 * most. Answers about an encrypted bank are kept sealed (the encrypting store does it).
 */
export async function idempotency(c: Context<AppEnv>, next: Next): Promise<Response | undefined> {
  const key = c.req.header('idempotency-key');
  const auth = c.get('auth');
  if (!key || !auth || !WRITES.has(c.req.method) || !c.req.path.startsWith('/v1/')) {
    await next();
    return;
  }
  if (key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) {
    throw new AppError('validation_error', 'Idempotency-Key must be 1-255 printable ASCII characters');
  }
  const store = c.get('services').store;
  const scope: IdempotencyScope = { projectId: auth.projectId, caller: callerOf(auth), key };
  // A file upload is hashed as the bytes it is (text decoding would lose its binary parts, and
  // cache a text the file route could not read the files from).
  const body = /^multipart\//i.test(c.req.header('content-type') ?? '')
    ? Buffer.from(await c.req.arrayBuffer()).toString('latin1')
    : await c.req.text();
  const hash = requestHash(c.req.method, target(c.req.url), body);
  const claim = await store.claimIdempotencyKey(scope, hash, IN_FLIGHT_LIMIT_MS);
  if (claim.state === 'done') {
    if (claim.withheld) {
      const forgotten = (claim.response as { forgotten?: unknown } | null)?.forgotten;
      if (typeof forgotten === 'string') {
        // A forget erased the answer (it named what was forgotten): refused, never run again.
        throw new AppError(
          'already_done',
          'this Idempotency-Key already made this request; its answer named what was since deleted',
          { extra: { id: null, receipt_id: forgotten } },
        );
      }
      const id = (claim.response as { id?: unknown } | null)?.id;
      throw new AppError(
        'already_done',
        'this Idempotency-Key already made this request; its answer held a secret that is shown only once',
        { extra: { id: typeof id === 'string' ? id : null } },
      );
    }
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
  c.set(
    'idempotencySeed',
    createHash('sha256').update(`${scope.projectId}\n${scope.caller}\n${key}\n${hash}`).digest('hex'),
  );
  try {
    await next();
  } catch (err) {
    await store.releaseIdempotencyKey(scope);
    throw err;
  }
  const spec = actionSpec(c.get('action'));
  if (c.res.status >= 300 || spec?.read) {
    await store.releaseIdempotencyKey(scope);
    return;
  }
  const text = await c.res.clone().text();
  let response: unknown = null;
  try {
    response = JSON.parse(text);
  } catch {}
  const withheld = spec?.secret === true || KEY_IN_TEXT.test(text);
  const id = (response as { id?: unknown } | null)?.id;
  await store
    .saveIdempotentResponse(scope, {
      status: c.res.status,
      response: withheld ? { id: typeof id === 'string' ? id : null } : response,
      withheld,
      bankId: bankOf(c),
    })
    .catch(async (err: unknown) => {
      // The request is done: answer it. Without a kept answer a retry runs it again.
      c.get('log').error({ err, requestId: c.get('requestId') }, 'keeping the idempotent answer failed');
      await store.releaseIdempotencyKey(scope).catch(() => {});
    });
}
