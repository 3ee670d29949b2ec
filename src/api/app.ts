import { randomUUID } from 'node:crypto';
import { OpenAPIHono } from '@hono/zod-openapi';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import { secureHeaders } from 'hono/secure-headers';
import type { Logger } from 'pino';
import type { Config } from '../config/load.js';
import type { Services } from '../core/services.js';
import { actionSpec } from '../contract/actions.js';
import { AppError } from '../core/errors.js';
import { keyIdOf } from '../core/projects.js';
import { consoleRoutes } from '../console/routes.js';
import { appendAuditEntry } from './audit.js';
import { authDefault, authMe } from './auth.js';
import { docsRoutes } from './docs.js';
import { hostCheck, hostPolicy } from './hosts.js';
import { nfcRequest } from './nfc.js';
import type { AppEnv } from './env.js';
import { renderError } from './errors.js';
import { rateLimits } from './limits.js';
import { type Metrics, measureRequests, metricsRoutes } from './metrics.js';
import { healthRoutes } from './routes/health.js';
import { templateSchemaRoutes } from './routes/templates.js';
import { GUARDED_MOUNTS } from './routes/index.js';
import { bodyText, readJsonBody } from './json-body.js';

/** Largest accepted request body (a Retain of 1,000 items fits). */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;
/**
 * The paths whose body is a form upload, not JSON: a document-transfer archive (Hindsight's form
 * field `file`) and files/retain's files.
 */
const UPLOADS = /^\/v1\/(me|default)\/banks\/[^/]+\/(document-transfer|files\/retain)$/;

export const API_VERSION = '1';

/** Records every mutating request and every 401/403; never fails the request it records. */
async function recordAudit(c: import('hono').Context<AppEnv>): Promise<void> {
  const status = c.res.status;
  const method = c.req.method;
  const action = c.get('action');
  const mutating = method !== 'GET' && method !== 'HEAD' && !actionSpec(action)?.read;
  if (!mutating && status !== 401 && status !== 403) return;
  const s = c.get('services');
  const auth = c.get('auth');
  let projectId = auth?.projectId;
  let keyId = auth?.actor.keyId ?? null;
  if (!projectId) {
    // A denied key still tells whose project was knocked on.
    keyId = keyIdOf(c.req.header('authorization')?.replace(/^Bearer\s+/i, '') ?? '');
    projectId =
      (keyId && (await s.store.getApiKey(keyId))?.project_id) ||
      (c.req.path.startsWith('/v1/default') ? 'default' : '-');
  }
  // A refused request's path or query may carry what no text column can hold (NUL).
  const text = (v: string | undefined) => v?.replaceAll('\u0000', '\uFFFD') ?? null;
  const bank = c.req.param('bank');
  await appendAuditEntry(s.store, {
    projectId,
    actorType: auth?.actor.type ?? 'unknown',
    keyId,
    action: action ?? `${method} ${c.req.routePath}`,
    bankId: text(bank),
    spaceId: text(c.req.param('space') ?? c.req.query('space')),
    status,
    requestId: c.get('requestId'),
  });
}

/** What an app serves: the parts of a composed runtime (`src/runtime/compose.ts`). */
export interface AppRuntime {
  readonly config: Config;
  readonly services: Services;
  /** The registry `/metrics` serves and requests are counted into. */
  readonly metrics: Metrics;
}

/** The HTTP application over a composed runtime; it reads the services and changes none of them. */
export function createApp(runtime: AppRuntime, log: Logger): OpenAPIHono<AppEnv> {
  const { services, config, metrics } = runtime;
  const app = new OpenAPIHono<AppEnv>();

  app.use('*', async (c, next) => {
    // The router matches a request whose path is literally '/*' to '*' twice: one request, one id.
    if (c.get('requestId')) return next();
    const incoming = c.req.header('x-request-id');
    const requestId = incoming && /^[\w.:-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    c.set('requestId', requestId);
    c.set('services', services);
    c.set('config', config);
    c.set('log', log);
    const started = performance.now();
    await next();
    // On the answer's own headers: `c.header` after the handler makes hono rebuild the answer as
    // a web Response, which the Node adapter then reads back through a web stream (~0.5 ms of a
    // Recall's CPU); the adapter writes its light Response's text straight to the socket.
    c.res.headers.set('X-Request-Id', requestId);
    const auth = c.get('auth');
    log.info(
      {
        requestId,
        method: c.req.method,
        route: c.req.routePath,
        status: c.res.status,
        ms: Math.round(performance.now() - started),
        project: auth?.projectId,
        bank: c.req.param('bank'),
      },
      'request',
    );
  });
  app.use('*', measureRequests(metrics));
  app.use('*', secureHeaders());
  // Liveness probes come from the orchestrator under whatever address it uses; they read nothing.
  const checkHost = hostCheck(hostPolicy(config));
  app.use('*', (c, next) =>
    c.req.method === 'GET' && /^\/health(\/ready|\/live)?$/.test(c.req.path) ? next() : checkHost(c, next),
  );
  if (config.corsOrigins) {
    app.use(
      '*',
      cors({ origin: config.corsOrigins.split(',').map((o) => o.trim()), exposeHeaders: ['X-Request-Id'] }),
    );
  }
  app.onError((err, c) => renderError(c, err));
  app.notFound((c) =>
    renderError(c, new AppError('not_found', `no route for ${c.req.method} ${c.req.path}`)),
  );

  app.use('/v1/*', async (c, next) => {
    await next();
    await recordAudit(c).catch((err) => log.error({ err }, 'audit write failed'));
  });
  const tooLarge = () => {
    throw new AppError('payload_too_large', `request body is larger than ${MAX_BODY_BYTES} bytes`);
  };
  const countedBody = bodyLimit({ maxSize: MAX_BODY_BYTES, onError: tooLarge });
  app.use('/v1/*', (c, next) => {
    // A body that declares its length (and no transfer encoding) is judged by it, as `bodyLimit`
    // judges it, but without reading `c.req.raw.body` first: over a socket that makes the Node
    // adapter build a web Request and stream the body through a web ReadableStream (~0.7 ms of
    // a Recall's CPU) instead of reading it straight from the socket. Other bodies are counted.
    const length = c.req.header('content-length');
    if (
      length !== undefined &&
      c.req.header('transfer-encoding') === undefined &&
      c.req.method !== 'GET' &&
      c.req.method !== 'HEAD'
    ) {
      return Number.parseInt(length || '0', 10) > MAX_BODY_BYTES ? tooLarge() : next();
    }
    return countedBody(c, next);
  });
  app.use('/v1/*', async (c, next) => {
    const hasBody =
      c.req.header('content-length') !== undefined || c.req.header('transfer-encoding') !== undefined;
    const type = c.req.header('content-type') ?? '';
    const upload = /^multipart\/form-data\b/i.test(type) && UPLOADS.test(c.req.path);
    if (
      hasBody &&
      c.req.header('content-length') !== '0' &&
      !upload &&
      !/^application\/([\w.+-]*\+)?json\b/i.test(type)
    ) {
      throw new AppError(
        'unsupported_media_type',
        'request bodies must be JSON (Content-Type: application/json)',
      );
    }
    if (/json/i.test(type)) {
      // Read in turns of the event loop (a 10 MB body would hold it for hundreds of ms); the
      // validator and the handler get the value read here instead of parsing the text again.
      const body = await readJsonBody(await bodyText(c.req));
      if (!body.ok && 'refused' in body) throw new AppError('validation_error', body.refused);
      c.req.json = body.ok
        ? <T>() => Promise.resolve(body.value as T)
        : () => Promise.reject(new SyntaxError('malformed JSON in request body'));
    }
    await next();
  });
  app.use('/v1/me/*', authMe);
  app.use('/v1/default/*', authDefault);
  app.use('/v1/*', rateLimits());
  // Idempotency-Key is honoured by each route's guard, after its scope check (auth.ts).

  for (const [base, routes] of GUARDED_MOUNTS) app.route(base, routes);
  app.route('/', healthRoutes);
  app.route('/', templateSchemaRoutes);
  app.route('/', metricsRoutes(metrics));
  app.route('/docs', docsRoutes);
  app.route('/console', consoleRoutes);

  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'mnemo',
      version: API_VERSION,
      description:
        'Memory service for AI agents. `/v1/me` takes a project API key; `/v1/default` is the operator surface.',
    },
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });
  // Before routing: path parameters (bank ids) and query values arrive in NFC (api/nfc.ts).
  const dispatch = app.fetch;
  app.fetch = (req, ...rest) => dispatch(nfcRequest(req), ...rest);
  return app;
}
