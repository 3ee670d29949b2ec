import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, TypedResponse } from 'hono';
import type { JSONParsed } from 'hono/utils/types';
import type { Services } from '../../core/services.js';
import type { AppEnv } from '../env.js';
import { authOf } from '../auth.js';
import { validationError } from '../errors.js';
import { ignoredFields, ignoredFieldsHeader } from '../ignored.js';

/** Bytes of a JSON body past which its handling gives the event loop a turn after validation. */
const BIG_BODY = 64 * 1024;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A router whose validation failures become our 400 body and whose tolerated-but-ignored body
 * fields are named in `X-Ignored-Fields`.
 */
export function router(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: async (result, c) => {
      if (!result.success) throw validationError(result.error);
      if (result.target === 'json') {
        // A big body has just been parsed and validated in one go: other requests, timers and
        // the embedded engine's statements get a turn before it is walked again and handled.
        if (Number(c.req.header('content-length') ?? 0) > BIG_BODY) await turn();
        const raw = await c.req.json().catch(() => undefined);
        const ignored = ignoredFields(raw, result.data);
        if (ignored.length) c.header('X-Ignored-Fields', ignoredFieldsHeader(ignored));
      }
    },
  });
}

/** The success statuses a route answers with. */
type Success = 200 | 201;

/** The body a route declares for status `S`, as a client parses it (from its `responses`). */
type Declared<R, S extends Success> = R extends TypedResponse<infer D, S, 'json'> ? D : never;

/** Every key of any member of a union (`keyof` of a union keeps only the shared ones). */
type AnyKey<B> = B extends object ? keyof B : never;
/** The type under key `K` in whichever members of `B` have it. */
type Under<B, K extends PropertyKey> = B extends object ? (K extends keyof B ? B[K] : never) : never;

/**
 * Paths of the fields of `A` that `B` does not declare, through objects and arrays: a field the
 * schema lacks would reach clients undocumented (and an optional field spelt wrong is one).
 */
type Undeclared<A, B, At extends string = '', Depth extends unknown[] = []> = Depth['length'] extends 8
  ? never
  : A extends readonly (infer X)[]
    ? B extends readonly (infer Y)[]
      ? Undeclared<X, Y, `${At}[]`, [...Depth, 0]>
      : never
    : A extends object
      ? [B] extends [object]
        ? // A free-form record (metadata, config overrides) declares any key.
          string extends AnyKey<B>
          ? never
          : {
              [K in keyof A & string]: K extends AnyKey<B>
                ? Undeclared<A[K], Under<B, K>, `${At}.${K}`, [...Depth, 0]>
                : `${At}.${K}`;
            }[keyof A & string]
        : never
      : never;

/**
 * What `body` must also be for `send` to compile: nothing more when its JSON form is the
 * declared body, else the declared body itself (so the compiler names the field that differs),
 * or an `undeclared` member naming the fields the schema lacks.
 */
type Checked<T, R, S extends Success> = [JSONParsed<T>] extends [Declared<R, S>]
  ? [Undeclared<JSONParsed<T>, Declared<R, S>>] extends [never]
    ? unknown
    : { undeclared: Undeclared<JSONParsed<T>, Declared<R, S>> }
  : Declared<R, S>;

/** Serialised bodies of frozen (shared, never changed) answers, such as cached Recall answers. */
const serialised = new WeakMap<object, string>();

/**
 * JSON response of a handler; dates serialise to ISO 8601. A frozen body is serialised once
 * however many requests it answers.
 *
 * Typed by where it is returned: `R` is inferred from the handler's return type, which
 * `@hono/zod-openapi` derives from the route's `responses`, so a body whose JSON form is not
 * the schema's declared body for `status` (a missing, misspelt or mistyped field, or one the
 * schema lacks) does not compile. Call it in a `return`, where that type reaches it.
 */
export function send<R, T extends object>(
  c: Context<AppEnv>,
  body: T & Checked<T, R, 200>,
): R & TypedResponse<JSONParsed<T>, 200, 'json'>;
export function send<R, T extends object, S extends Success>(
  c: Context<AppEnv>,
  body: T & Checked<T, R, S>,
  status: S,
): R & TypedResponse<JSONParsed<T>, S, 'json'>;
export function send(c: Context<AppEnv>, body: object, status: Success = 200): Response {
  if (!Object.isFrozen(body)) return c.json(body, status);
  let text = serialised.get(body);
  if (text === undefined) {
    text = JSON.stringify(body);
    serialised.set(body, text);
  }
  return c.body(text, status, { 'content-type': 'application/json' });
}

export const servicesOf = (c: Context<AppEnv>): Services => c.get('services');

/** A handler's context whose validated path names a bank. */
type BankContext = Context<AppEnv, string, { out: { param: { bank: string } } }>;

/**
 * The first three arguments of every core function over one bank: the services, the caller's
 * project and the bank of the path (`fn(...inBank(c), …)`).
 */
export const inBank = (c: BankContext): [Services, string, string] => [
  servicesOf(c),
  authOf(c).projectId,
  c.req.valid('param').bank,
];
