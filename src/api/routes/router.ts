import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { Services } from '../../core/services.js';
import type { AppEnv } from '../env.js';
import { validationError } from '../errors.js';
import { ignoredFields, ignoredFieldsHeader } from '../ignored.js';

/**
 * A router whose validation failures become our 400 body and whose tolerated-but-ignored body
 * fields are named in `X-Ignored-Fields`.
 */
export function router(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: async (result, c) => {
      if (!result.success) throw validationError(result.error);
      if (result.target === 'json') {
        const raw = await c.req.json().catch(() => undefined);
        const ignored = ignoredFields(raw, result.data);
        if (ignored.length) c.header('X-Ignored-Fields', ignoredFieldsHeader(ignored));
      }
    },
  });
}

/** Serialised bodies of frozen (shared, never changed) answers, such as cached Recall answers. */
const serialised = new WeakMap<object, string>();

/**
 * JSON response of a handler; dates serialise to ISO 8601. A frozen body is serialised once
 * however many requests it answers.
 */
export function send(c: Context<AppEnv>, body: unknown, status: 200 | 201 = 200): any {
  if (body === null || typeof body !== 'object' || !Object.isFrozen(body))
    return c.json(body as object, status);
  let text = serialised.get(body);
  if (text === undefined) {
    text = JSON.stringify(body);
    serialised.set(body, text);
  }
  return c.body(text, status, { 'content-type': 'application/json' });
}

export const servicesOf = (c: Context<AppEnv>): Services => c.get('services');
