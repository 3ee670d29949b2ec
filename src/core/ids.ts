import { invalid } from './errors.js';

/** Longest accepted bank, space, document or project id. */
export const MAX_ID_LENGTH = 256;

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Bank ids are free-form (e-mail addresses, `user:42`, paths with `/`) but bounded and free of
 * control characters, which would break logs, URLs and terminals.
 */
export function checkId(kind: string, id: string, path = kind): string {
  if (id.length === 0) throw invalid(path, `${kind} must not be empty`);
  if (id.length > MAX_ID_LENGTH) throw invalid(path, `${kind} is longer than ${MAX_ID_LENGTH} characters`);
  if (CONTROL.test(id)) throw invalid(path, `${kind} must not contain control characters`);
  if (id.trim() !== id) throw invalid(path, `${kind} must not start or end with white space`);
  return id;
}

/** Project and space ids are names in URLs and CLIs: a stricter alphabet. */
export function checkSlug(kind: string, id: string, path = kind): string {
  checkId(kind, id, path);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(id)) {
    throw invalid(
      path,
      `${kind} may contain letters, digits, '.', '_' and '-' and must start with a letter or digit`,
    );
  }
  return id;
}

// Memory, directive and operation ids are uuid columns of the store.
export { isUuid } from '../store/uuid.js';

export const ORG_PREFIX = '__org__:';

/** The implicit org bank of a space. */
export const orgBankId = (space: string) => `${ORG_PREFIX}${space}`;

/** The space whose org bank this is, or null for a person bank. */
export function orgSpaceOf(bankId: string): string | null {
  return bankId.startsWith(ORG_PREFIX) ? bankId.slice(ORG_PREFIX.length) : null;
}
