import { Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { AppError } from '../../core/errors.js';
import { checkId } from '../../core/ids.js';
import { keyIdOf } from '../../core/projects.js';
import { handleMcpRequest, MCP_MAX_BODY_BYTES } from '../../mcp/http.js';
import { appendAuditEntry } from '../audit.js';
import { authDefault, authMe, authOf, guard } from '../auth.js';
import { bodyText, readJsonBody } from '../json-body.js';
import type { AppEnv } from '../env.js';
import { hostPolicy, mcpHostOptions } from '../hosts.js';
import { countRequests, rateLimits } from '../limits.js';

/**
 * A project API key (any project, like `/v1/me`) or the operator credentials of `/v1/default`
 * (project `default`).
 */
const mcpAuth: MiddlewareHandler<AppEnv> = (c, next) => {
  const header = c.req.header('authorization');
  if (header && /^Bearer\s+mk_/i.test(header)) return authMe(c, next);
  if (!header && c.get('config').adminToken) {
    throw new AppError('unauthenticated', 'missing API key (Authorization: Bearer mk_...)');
  }
  return authDefault(c, next);
};

/** Refused attempts go to the audit trail of the project knocked on (`default` when unknown). */
const auditRefusals: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  const status = c.res.status;
  if (status !== 401 && status !== 403) return;
  const s = c.get('services');
  const auth = c.get('auth');
  const keyId = auth?.actor.keyId ?? keyIdOf(c.req.header('authorization')?.replace(/^Bearer\s+/i, '') ?? '');
  const projectId = auth?.projectId ?? (keyId && (await s.store.getApiKey(keyId))?.project_id) ?? 'default';
  await appendAuditEntry(s.store, {
    projectId,
    actorType: auth?.actor.type ?? 'unknown',
    keyId,
    action: 'mcp',
    bankId: c.req.query('bank') ?? null,
    spaceId: null,
    status,
    requestId: c.get('requestId'),
  }).catch((err) => c.get('log').error({ err }, 'audit write failed'));
};

/** JSON-RPC requests (not notifications or responses) of a batch. */
const callsIn = (batch: unknown[]) =>
  batch.filter((m) => typeof m === 'object' && m !== null && 'method' in m && 'id' in m).length;

/**
 * `/mcp`: the MCP Streamable HTTP endpoint (stateless, JSON responses). Needs the `mcp` scope;
 * each tool checks the scope of its own operation. `?bank=` sets the default bank of the calls.
 * Each HTTP request, and each call of a batch beyond its first, counts against the project's and
 * the key's requests per minute.
 */
export const mcpRoutes = new Hono<AppEnv>()
  .use('*', auditRefusals, mcpAuth, guard('mcp'), rateLimits())
  .post(
    '/',
    // The body is read here, before the transport (whose own limit would come too late).
    bodyLimit({
      maxSize: MCP_MAX_BODY_BYTES,
      onError: () => {
        throw new AppError('payload_too_large', `request body is larger than ${MCP_MAX_BODY_BYTES} bytes`);
      },
    }),
    async (c) => {
      const auth = authOf(c);
      const bank = c.req.query('bank');
      if (bank !== undefined) checkId('bank id', bank, 'bank');
      const hosts = mcpHostOptions(hostPolicy(c.get('config')), c.req.raw);
      // The same refusals as every /v1 body (text no column can hold, and a `__proto__` member,
      // which zod would drop silently from tool arguments), read in turns of the event loop. The
      // transport gets the value read here; a malformed body still gets its JSON-RPC parse error,
      // from a text it refuses at once instead of parsing up to 10 MB again.
      const body = await readJsonBody(await bodyText(c.req));
      if (!body.ok && 'refused' in body) throw new AppError('validation_error', body.refused);
      // A JSON-RPC batch carries up to 100 calls in one HTTP request, each as much work as a
      // request of its own: the calls beyond the first count too, before any of them runs.
      if (body.ok && Array.isArray(body.value)) await countRequests(c, callsIn(body.value) - 1);
      return handleMcpRequest(
        new Request(c.req.raw, { body: body.ok ? '' : '{' }),
        {
          services: c.get('services'),
          projectId: auth.projectId,
          actor: auth.actor,
          scopes: auth.scopes,
          banks: auth.banks,
          defaultBank: bank,
          requestId: c.get('requestId'),
          log: c.get('log'),
        },
        hosts,
        body.ok ? body.value : undefined,
      );
    },
  )
  // Stateless: no server-to-client stream to open (GET) and no session to end (DELETE).
  .all('/', (c) => c.body(null, 405, { Allow: 'POST' }));
