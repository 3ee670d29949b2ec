/** The key with its last character changed: the right key id, a wrong secret, never the key itself. */
export function wrongSecret(key: string): string {
  return key.slice(0, -1) + (key.endsWith('x') ? 'y' : 'x');
}
