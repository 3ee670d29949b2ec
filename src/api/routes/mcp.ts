import { Hono, type MiddlewareHandler } from 'hono';
import { AppError } from '../../core/errors.js';
import { protoMemberText } from '../body-text.js';
import { checkId } from '../../core/ids.js';
import { keyIdOf } from '../../core/projects.js';
import { handleMcpRequest } from '../../mcp/http.js';
import { appendAuditEntry } from '../audit.js';
import { authDefault, authMe, authOf, guard } from '../auth.js';
import { unstorableText } from '../body-text.js';
import type { AppEnv } from '../env.js';
import { hostPolicy, mcpHostOptions } from '../hosts.js';
import { rateLimits } from '../limits.js';

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

/**
 * `/mcp`: the MCP Streamable HTTP endpoint (stateless, JSON responses). Needs the `mcp` scope;
 * each tool checks the scope of its own operation. `?bank=` sets the default bank of the calls.
 * Each HTTP request counts against the project's and the key's requests per minute.
 */
export const mcpRoutes = new Hono<AppEnv>()
  .use('*', auditRefusals, mcpAuth, guard('mcp'), rateLimits())
  .post('/', async (c) => {
    const auth = authOf(c);
    const bank = c.req.query('bank');
    if (bank !== undefined) checkId('bank id', bank, 'bank');
    // Tool arguments are validated by zod, which drops a `__proto__` member silently.
    const refused = protoMemberText(await c.req.raw.clone().text());
    if (refused) throw new AppError('validation_error', refused);
    const hosts = mcpHostOptions(hostPolicy(c.get('config')), c.req.raw);
    // The same refusal as every /v1 body: text no column can hold never reaches a tool.
    const text = await c.req.text();
    const unstorable = unstorableText(text);
    if (unstorable) throw new AppError('validation_error', unstorable);
    return handleMcpRequest(
      new Request(c.req.raw, { body: text }),
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
    );
  })
  // Stateless: no server-to-client stream to open (GET) and no session to end (DELETE).
  .all('/', (c) => c.body(null, 405, { Allow: 'POST' }));
