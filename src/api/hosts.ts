import type { MiddlewareHandler } from 'hono';
import type { Config } from '../config/load.js';
import { AppError } from '../core/errors.js';
import { isLoopbackHost } from '../net/loopback.js';
import type { AppEnv } from './env.js';

/** The host name of a `Host` header value (`name`, `name:port`, `[v6]:port`), lower-cased; null if malformed. */
export function hostName(header: string): string | null {
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]\s/@]+)(?::(\d{1,5}))?$/i.exec(header.trim());
  if (!m) return null;
  const name = m[1]!.toLowerCase();
  return name.startsWith('[') ? name.slice(1, -1) : name;
}

/** Who may be served: the decision of one request by its `Host` and `Origin` headers. */
export interface HostPolicy {
  /** Whether the `Host` header is checked at all (no operator token, or an explicit list). */
  readonly enforced: boolean;
  /** Names (lower-case, IPv6 without brackets) served besides loopback. */
  readonly names: ReadonlySet<string>;
  /** Origins listed in `MNEMO_CORS_ORIGINS`, exactly as the browser sends them. */
  readonly corsOrigins: ReadonlySet<string>;
}

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);

/**
 * Builds the policy from config: `MNEMO_ALLOWED_HOSTS` names, plus the listening address when
 * it names one host (not `0.0.0.0`/`::`). Hosts are checked when there is no operator token —
 * an open `/v1/default` must not be reachable through a rebinding DNS name — or when the list
 * is set explicitly.
 */
export function hostPolicy(config: Config): HostPolicy {
  const listed = (config.allowedHosts ?? '')
    .split(',')
    .map((h) =>
      h
        .trim()
        .toLowerCase()
        .replace(/^\[(.*)\]$/, '$1'),
    )
    .filter(Boolean);
  const names = new Set(listed);
  if (!WILDCARDS.has(config.host)) names.add(config.host.toLowerCase().replace(/^\[(.*)\]$/, '$1'));
  const corsOrigins = new Set(
    (config.corsOrigins ?? '')
      .split(',')
      .map((o) => o.trim())
      .filter(Boolean),
  );
  return { enforced: !config.adminToken || listed.length > 0, names, corsOrigins };
}

/** Whether a host name (from `Host` or `Origin`) is one this server answers to. */
export function hostAllowed(policy: HostPolicy, name: string): boolean {
  return isLoopbackHost(name) || policy.names.has(name);
}

/**
 * Why a request must be refused, or null. A browser page of a foreign site can reach a
 * loopback server under its own (rebound) name: the `Host` header then names that site, and
 * the `Origin` header of any cross-site request names it too.
 */
export function refusal(
  policy: HostPolicy,
  host: string | undefined,
  origin: string | undefined,
): AppError | null {
  const name = host === undefined ? null : hostName(host);
  if (policy.enforced && (name === null || !hostAllowed(policy, name))) {
    return new AppError(
      'host_not_allowed',
      `Host '${host ?? ''}' is not served here; add it to MNEMO_ALLOWED_HOSTS`,
      {
        extra: { host: host ?? null },
      },
    );
  }
  if (origin === undefined || policy.corsOrigins.has(origin)) return null;
  let originHost: string | null = null;
  try {
    const u = new URL(origin);
    if (u.protocol === 'http:' || u.protocol === 'https:')
      originHost = u.hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {}
  // Same site as the request (its Host) is fine even where hosts are not checked.
  const ok =
    originHost !== null && (hostAllowed(policy, originHost) || (!policy.enforced && originHost === name));
  return ok
    ? null
    : new AppError(
        'origin_not_allowed',
        `Origin '${origin}' may not call this server; list it in MNEMO_CORS_ORIGINS`,
        {
          extra: { origin },
        },
      );
}

/** Middleware: refuses a request whose `Host` or `Origin` is not this server's (403). */
export function hostCheck(policy: HostPolicy): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    // A request built in-process (tests, `app.request`) carries no Host header: its URL names the host.
    const host = c.req.header('host') ?? new URL(c.req.url).host;
    const err = refusal(policy, host, c.req.header('origin'));
    if (err) throw err;
    await next();
  };
}

/**
 * The MCP transport's own DNS-rebinding options from the same policy. The SDK compares whole
 * `Host` and `Origin` values, so each allowed name is listed with the port of this request.
 */
export function mcpHostOptions(
  policy: HostPolicy,
  req: Request,
): { enableDnsRebindingProtection: boolean; allowedHosts?: string[]; allowedOrigins?: string[] } {
  const hostHeader = req.headers.get('host') ?? new URL(req.url).host;
  const origin = req.headers.get('origin');
  const portOf = (v: string) => /:(\d{1,5})$/.exec(v)?.[1];
  const hostPort = portOf(hostHeader);
  const names = [...policy.names, 'localhost', '127.0.0.1', '::1'];
  const requestName = hostName(hostHeader);
  // Loopback literals other than the usual three are allowed too; list this request's if it is one.
  if (requestName && isLoopbackHost(requestName)) names.push(requestName);
  if (!policy.enforced && requestName) names.push(requestName);
  const inHost = (n: string) => (n.includes(':') ? `[${n}]` : n);
  const allowedHosts = names.flatMap((n) => [inHost(n), ...(hostPort ? [`${inHost(n)}:${hostPort}`] : [])]);
  let originPort: string | undefined;
  try {
    originPort = origin ? new URL(origin).port || undefined : undefined;
  } catch {}
  const allowedOrigins = [
    ...policy.corsOrigins,
    ...names.flatMap((n) =>
      ['http', 'https'].flatMap((s) => [
        `${s}://${inHost(n)}`,
        ...(originPort ? [`${s}://${inHost(n)}:${originPort}`] : []),
      ]),
    ),
  ];
  return {
    enableDnsRebindingProtection: true,
    // Without a Host header (an in-process request) the middleware has checked the URL's host.
    allowedHosts: policy.enforced && req.headers.has('host') ? allowedHosts : undefined,
    allowedOrigins,
  };
}
