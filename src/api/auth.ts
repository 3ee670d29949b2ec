import { timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { AppError } from '../core/errors.js';
import { type BankScope, requireInScope } from '../core/bank-scope.js';
import { verifyKey } from '../core/projects.js';
import {
  ACTIONS,
  type Action,
  type ActionSpec,
  bankFiltered,
  scopesAdmit,
  scopesNeeded,
} from '../contract/actions.js';
import type { AppEnv, Auth } from './env.js';
import { idempotency } from './idempotency.js';

function bearer(c: Context<AppEnv>): string | null {
  const h = c.req.header('authorization');
  if (!h) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  if (!m) throw new AppError('unauthenticated', 'Authorization header must be "Bearer <key>"');
  return m[1]!;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

async function keyAuth(c: Context<AppEnv>, presented: string): Promise<Auth> {
  const key = await verifyKey(c.get('services'), presented);
  if (!key) throw new AppError('unauthenticated', 'invalid, expired or revoked API key');
  return {
    projectId: key.project_id,
    actor: { type: 'key', keyId: key.id },
    scopes: new Set(key.scopes),
    banks: key.banks ?? null,
  };
}

/** `/v1/me`: a project API key, and `me` is its project. */
export const authMe: MiddlewareHandler<AppEnv> = async (c, next) => {
  const presented = bearer(c);
  if (!presented) throw new AppError('unauthenticated', 'missing API key (Authorization: Bearer mk_...)');
  c.set('auth', await keyAuth(c, presented));
  await next();
};

/**
 * `/v1/default`: the operator token when one is configured (or anyone on loopback when none
 * is), or an API key of the `default` project with its scopes.
 */
export const authDefault: MiddlewareHandler<AppEnv> = async (c, next) => {
  const token = c.get('config').adminToken;
  const presented = bearer(c);
  if (presented && token && sameSecret(presented, token)) {
    c.set('auth', { projectId: 'default', actor: { type: 'operator' }, scopes: 'all', banks: null });
  } else if (presented?.startsWith('mk_')) {
    const auth = await keyAuth(c, presented);
    if (auth.projectId !== 'default')
      throw new AppError('unauthenticated', 'this key belongs to another project; use /v1/me');
    c.set('auth', auth);
  } else if (!token) {
    c.set('auth', { projectId: 'default', actor: { type: 'anonymous' }, scopes: 'all', banks: null });
  } else {
    throw new AppError('unauthenticated', presented ? 'invalid operator token' : 'missing operator token');
  }
  await next();
};

/** The caller's auth; routes run after an auth middleware, so it is always there. */
export function authOf(c: Context<AppEnv>): Auth {
  const auth = c.get('auth');
  if (!auth) throw new AppError('unauthenticated', 'not authenticated');
  return auth;
}

/**
 * The one bank check of every route: a bank-scoped key reaches a route's `{bank}` only when it
 * is within the key's banks (else 404, as for a bank that does not exist), and a route addressed
 * to no bank (spaces, audit, anything added later) only when its action is `bankFiltered`.
 * Bank ids in bodies (Recall's org bank) are checked where they are read.
 */
function checkBankScope(c: Context<AppEnv>, action: Action, banks: BankScope): void {
  const bank = c.req.param('bank');
  if (bank !== undefined) requireInScope(banks, bank);
  else if (!bankFiltered(action)) {
    throw new AppError(
      'forbidden',
      'this key is limited to some banks; this endpoint spans the whole project',
    );
  }
}

/** A route's guard, carrying its action so the docs can tell which routes need which scope. */
export type Guard = MiddlewareHandler<AppEnv> & { readonly action: Action };

/**
 * Route guard: names the audit action and demands its scope from the catalogue (403 naming it).
 * Only then does the request's `Idempotency-Key` count: a replay is answered to a caller allowed
 * to make the request.
 */
export function guard(action: Action): Guard {
  const spec: ActionSpec = ACTIONS[action];
  const { scope } = spec;
  const check: MiddlewareHandler<AppEnv> = async (c, next) => {
    c.set('action', action);
    const auth = authOf(c);
    const allowed = scope === 'operator' ? auth.actor.type !== 'key' : scopesAdmit(spec, auth.scopes);
    if (!allowed) {
      throw new AppError(
        'forbidden',
        scope === 'operator'
          ? 'this endpoint needs the operator token'
          : `this key lacks the ${scopesNeeded(spec)} scope`,
        { extra: { required_scope: scope } },
      );
    }
    if (auth.banks !== null) checkBankScope(c, action, auth.banks);
    return idempotency(c, next);
  };
  return Object.assign(check, { action });
}
