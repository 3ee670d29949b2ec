import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError, notFound } from './errors.js';
import { checkSlug } from './ids.js';
import type { TenancyStore } from '../store/store.js';
import type { Deps } from './services.js';

/** Projects and keys need only the tenancy rows and the clock (the CLI's key commands load nothing else). */
type Tenancy = Deps<TenancyStore, 'now'>;
import { checkBankPatterns } from './bank-scope.js';
import type { ApiKeyRecord, Project, ProjectLimits, Scope } from './types.js';

const KEY_PATTERN = /^mk_([A-Za-z0-9]{12})_([A-Za-z0-9_-]{32,})$/;
/** A whole API key anywhere in a text (to keep secrets out of what is stored). */
export const KEY_IN_TEXT = /mk_[A-Za-z0-9]{12}_[A-Za-z0-9_-]{32,}/;

/** Keys are high-entropy, so a keyed fast hash (HMAC-SHA256 with a per-install pepper) suffices. */
async function hashSecret(s: Tenancy, secret: string): Promise<string> {
  const pepper = await s.store.setting('key_pepper', () => randomBytes(32).toString('base64url'));
  return createHmac('sha256', pepper).update(secret).digest('base64url');
}

export async function createProject(s: Tenancy, input: { id: string; name: string; limits?: ProjectLimits }) {
  checkSlug('project id', input.id, 'id');
  const p = await s.store.createProject(input);
  if (!p) throw new AppError('conflict', `project '${input.id}' already exists`);
  return p;
}

export async function requireProject(s: Tenancy, id: string): Promise<Project> {
  const p = await s.store.getProject(id);
  if (!p) throw notFound(`project '${id}'`);
  return p;
}

export async function deleteProject(s: Tenancy, id: string) {
  if (id === 'default')
    throw new AppError('validation_error', "the built-in project 'default' cannot be deleted");
  if (!(await s.store.deleteProject(id))) throw notFound(`project '${id}'`);
  return { deleted: true as const, id };
}

/** Public view of a key: never the secret or its hash. */
export function keyView(k: ApiKeyRecord) {
  return {
    id: k.id,
    project_id: k.project_id,
    name: k.name,
    scopes: k.scopes,
    banks: k.banks ?? null,
    created_at: k.created_at,
    expires_at: k.expires_at,
    revoked_at: k.revoked_at,
  };
}

/** Mints a key `mk_<id>_<secret>`; the full key is returned once and only its hash is kept. */
export async function createKey(
  s: Tenancy,
  projectId: string,
  input: { name: string; scopes: Scope[]; banks?: string[] | null; expires_at?: Date | null },
) {
  await requireProject(s, projectId);
  if (input.expires_at && input.expires_at.getTime() <= s.now().getTime()) {
    throw new AppError('validation_error', 'expires_at must be in the future', {
      details: [{ path: 'expires_at', message: 'must be in the future' }],
    });
  }
  const banks = input.banks == null ? null : checkBankPatterns(input.banks);
  const id = randomBytes(9).toString('base64url').replace(/[-_]/g, 'x').slice(0, 12);
  const secret = randomBytes(24).toString('base64url');
  const record = await s.store.createApiKey({
    id,
    projectId,
    name: input.name,
    scopes: [...new Set(input.scopes)],
    banks,
    secretHash: await hashSecret(s, secret),
    expiresAt: input.expires_at ?? null,
  });
  return { ...keyView(record), key: `mk_${id}_${secret}` };
}

export async function revokeKey(s: Tenancy, projectId: string, keyId: string) {
  if (!(await s.store.revokeApiKey(projectId, keyId))) throw notFound(`key '${keyId}'`);
  return { revoked: true as const, id: keyId };
}

/**
 * Resolves a presented key to its record, or null when it is malformed, unknown, revoked,
 * expired or wrong. Read from the database every time, so revocation is immediate everywhere.
 * Every well-formed key costs the same work — the record lookup, the keyed hash and a
 * constant-time comparison (against a dummy when the id is unknown) — so the time of a refusal
 * does not tell which key ids exist, or which are revoked or expired.
 */
export async function verifyKey(s: Tenancy, presented: string): Promise<ApiKeyRecord | null> {
  const m = KEY_PATTERN.exec(presented);
  if (!m) return null;
  const record = await s.store.getApiKey(m[1]!);
  const actual = Buffer.from(await hashSecret(s, m[2]!));
  // A base64url hash never holds a NUL byte, so the dummy never matches.
  const expected = record ? Buffer.from(record.secret_hash) : Buffer.alloc(actual.length);
  const matches = expected.length === actual.length && timingSafeEqual(expected, actual);
  if (!record || !matches || record.revoked_at) return null;
  if (record.expires_at && record.expires_at.getTime() <= s.now().getTime()) return null;
  return record;
}

/** The key id of a presented key, if it looks like one (for audit of failed attempts). */
export const keyIdOf = (presented: string) => KEY_PATTERN.exec(presented)?.[1] ?? null;
