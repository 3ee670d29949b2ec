import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';

/** The master key is 32 random bytes (AES-256), given base64 (standard or URL-safe) or hex. */
export const MASTER_KEY_BYTES = 32;

const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const WRAP_VERSION = 'w1';

/**
 * Parses `MNEMO_MASTER_KEY`: 32 bytes as base64 (e.g. `openssl rand -base64 32`) or 64 hex
 * digits. Anything else is an Error saying what is expected, never a silently weak key.
 */
export function parseMasterKey(raw: string): Buffer {
  const text = raw.trim();
  let key: Buffer | null = null;
  if (/^[0-9a-fA-F]{64}$/.test(text)) key = Buffer.from(text, 'hex');
  else if (/^[A-Za-z0-9+/_-]{42,44}={0,2}$/.test(text))
    key = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (!key || key.length !== MASTER_KEY_BYTES) {
    throw new Error(
      `MNEMO_MASTER_KEY must be ${MASTER_KEY_BYTES} random bytes, base64 (openssl rand -base64 32) or 64 hex digits`,
    );
  }
  return key;
}

/** A short public name of a master key, stored beside each data key it wraps (not a secret). */
export function masterFingerprint(master: Buffer): string {
  return createHmac('sha256', master).update('mnemo master key fingerprint v1').digest('hex').slice(0, 16);
}

/** The additional data a bank's wrapped key is bound to: it cannot be moved to another bank. */
const wrapContext = (projectId: string, bankId: string) =>
  Buffer.from(`mnemo:bank-key:${projectId}\u0000${bankId}`);

/** Encrypts a bank's data key with the master key (AES-256-GCM). */
export function wrapDataKey(master: Buffer, dataKey: Buffer, projectId: string, bankId: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', master, nonce);
  cipher.setAAD(wrapContext(projectId, bankId));
  const body = Buffer.concat([cipher.update(dataKey), cipher.final()]);
  return `${WRAP_VERSION}.${Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64url')}`;
}

/**
 * The bank id a wrapped key is bound to. Migration 20 put bank ids in NFC without the master
 * key, so a renamed bank's key, wrapped for its old id, carries that id after a third dot
 * (base64url). It is honoured only for the bank that id was renamed to (its NFC form, or the
 * legacy name that ends in its MD5 digits, as the migration names them) and only if it is
 * outside NFC, which no bank id is any more: a wrapped key copied to another bank, suffix and
 * all, does not open there. A master key rotation wraps the key for the current id again.
 */
function boundBankId(bankId: string, suffix: string | undefined): string {
  if (suffix === undefined) return bankId;
  const old = Buffer.from(suffix, 'base64url').toString('utf8');
  const digest = createHash('md5').update(old).digest('hex');
  const renamedTo =
    bankId === old.normalize('NFC') ||
    bankId.endsWith(`~legacy-${digest.slice(0, 8)}`) ||
    bankId.endsWith(`~legacy-${digest}`);
  if (old === old.normalize('NFC') || !renamedTo) throw new Error('wrapped key bound to another bank');
  return old;
}

/** Decrypts a wrapped data key; throws when the master key (or the bank) is not the one it was wrapped for. */
export function unwrapDataKey(master: Buffer, wrapped: string, projectId: string, bankId: string): Buffer {
  const [version, data, boundTo, ...rest] = wrapped.split('.');
  if (version !== WRAP_VERSION || !data || rest.length) throw new Error('unknown wrapped key format');
  const raw = Buffer.from(data, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', master, raw.subarray(0, NONCE_BYTES));
  decipher.setAAD(wrapContext(projectId, boundBankId(bankId, boundTo)));
  decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
  return Buffer.concat([
    decipher.update(raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES)),
    decipher.final(),
  ]);
}

/** A fresh random data key. */
export const newDataKey = () => randomBytes(32);
