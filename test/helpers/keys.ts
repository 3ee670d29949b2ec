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
