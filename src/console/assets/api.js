/**
 * The console's HTTP client and session. The credential lives in this tab's sessionStorage
 * only; it is sent as a Bearer token to the same origin and nowhere else.
 */

const SESSION_KEY = 'mnemo.console.session';

/** An error answer of the API (or a network failure, status 0), with the server's details. */
export class ApiError extends Error {
  constructor(status, body, requestId) {
    const e = body?.error ?? {};
    super(e.message ?? (status ? `HTTP ${status}` : 'The server could not be reached'));
    this.status = status;
    this.code = e.code ?? (status ? 'http_error' : 'network_error');
    this.details = Array.isArray(e.details) ? e.details : [];
    this.requiredScope = e.required_scope;
    this.requestId = e.request_id ?? requestId ?? undefined;
  }
}

/** `{token, mode: 'operator'|'key', base: '/v1/default'|'/v1/me'}` or null. */
export function session() {
  try {
    return JSON.parse(sessionStorage.getItem(SESSION_KEY) ?? 'null');
  } catch {
    return null;
  }
}

export const saveSession = (s) => sessionStorage.setItem(SESSION_KEY, JSON.stringify(s));
export const clearSession = () => sessionStorage.removeItem(SESSION_KEY);

let unauthorized = () => {};
/** Called when a request of the signed-in session answers 401 (revoked key, new token). */
export const onUnauthorized = (fn) => {
  unauthorized = fn;
};

/**
 * One JSON request. `token` overrides the session's (used to check a credential before
 * signing in). Empty query values are left out. Rejects with ApiError.
 */
export async function request(method, path, { body, query, token } = {}) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
  }
  const headers = { accept: 'application/json' };
  const credential = token ?? session()?.token;
  if (credential) headers.authorization = `Bearer ${credential}`;
  let payload;
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(url, { method, headers, body: payload, credentials: 'omit', cache: 'no-store' });
  } catch {
    throw new ApiError(0, null);
  }
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) {
    const err = new ApiError(res.status, data, res.headers.get('x-request-id'));
    if (res.status === 401 && token === undefined) unauthorized(err);
    throw err;
  }
  return data;
}

/** Path on the session's surface: `/v1/default/...` for the operator, `/v1/me/...` for a key. */
export const onSurface = (rest) => `${session()?.base ?? '/v1/default'}${rest}`;

/** Path of a bank on the session's surface (the id URL-encoded: `alice%40example.com`). */
export const bankUrl = (bank, rest = '') => onSurface(`/banks/${encodeURIComponent(bank)}${rest}`);

export const get = (path, query) => request('GET', path, { query });
export const post = (path, body) => request('POST', path, { body });
export const patch = (path, body) => request('PATCH', path, { body });
export const put = (path) => request('PUT', path);
export const del = (path) => request('DELETE', path);

/** True when the endpoint does not exist on this server (an optional feature is absent). */
export const isMissingRoute = (err) => err instanceof ApiError && err.status === 404;

let openapi;
/** The server's OpenAPI document (cached): the console reads config field types from it. */
export function openApi() {
  openapi ??= request('GET', '/openapi.json').catch(() => null);
  return openapi;
}
