import type { TestApp } from './app.js';

/** The key with its last character changed: the right key id, a wrong secret, never the key itself. */
export function wrongSecret(key: string): string {
  return key.slice(0, -1) + (key.endsWith('x') ? 'y' : 'x');
}

/** The secret part of an API key: everything after `mk_<12-character id>_` (it may hold `_`). */
export function secretOf(key: string): string {
  const secret = key.slice('mk_'.length + 12 + 1);
  if (secret.length < 32) throw new Error(`not an API key: ${key}`);
  return secret;
}

/** Creates project `id` (as the operator) and returns a new API key of it with `scopes`. */
export async function projectWithKey(
  t: Pick<TestApp, 'call'>,
  id: string,
  scopes = ['retain', 'recall', 'admin'],
): Promise<string> {
  const p = await t.call('POST', '/v1/default/projects', { body: { id, name: id } });
  if (p.status !== 201) throw new Error(`project ${id}: ${p.status} ${JSON.stringify(p.body)}`);
  const k = await t.call('POST', `/v1/default/projects/${id}/keys`, { body: { name: 'a', scopes } });
  if (k.status !== 201) throw new Error(`key of ${id}: ${k.status} ${JSON.stringify(k.body)}`);
  return k.body.key;
}
