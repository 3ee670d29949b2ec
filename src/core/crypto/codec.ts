import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { ENCRYPTION_CHANGED, SEALED } from '../../store/sealed.js';

// The sealed prefix is defined beside the store's SQL, which tells the two forms apart by it.
export { ENCRYPTION_CHANGED, SEALED };

/** Escaped plaintext starts with U+0001 too (see SEALED), so nothing plain can pass for a ciphertext. */
const ESCAPED = '\u0001p:';
/** The member of a stored metadata object holding the encrypted original. */
export const SEALED_MEMBER = '\u0001e1';
const ESCAPED_MEMBER = '\u0001p';

const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Hex digits of a keyed hash: 128 bits, no collisions within a bank in practice. */
const HASH_HEX = 32;

/** What a ciphertext holds; bound into it, so one field's ciphertext cannot be swapped into another. */
export type Field =
  | 'text'
  | 'context'
  | 'metadata'
  | 'entity'
  | 'payload'
  | 'directive'
  | 'bank'
  | 'document'
  | 'source'
  | 'reply'
  | 'evaluation'
  | 'webhook'
  | 'mental_model'
  | 'archive';

export const isSealed = (v: string) => v.startsWith(SEALED);

/** The stored form of a plaintext string in any bank (escaped if it could look sealed). */
export const storePlain = (v: string) => (v.startsWith('\u0001') ? ESCAPED + v : v);

/** The stored form of plaintext metadata in any bank. */
export function storePlainMetadata(m: Record<string, unknown>): Record<string, unknown> {
  return Object.keys(m).some((k) => k.startsWith('\u0001')) ? { [ESCAPED_MEMBER]: m } : m;
}

/** The sealed payload of stored metadata, if it is sealed. */
export function sealedMetadata(m: Record<string, unknown> | null | undefined): string | null {
  const v = m?.[SEALED_MEMBER];
  return typeof v === 'string' ? v : null;
}

/** Plaintext metadata as stored (unescaped); sealed metadata must be opened by its bank's codec. */
export function plainMetadata(m: Record<string, unknown>): Record<string, unknown> {
  const inner = m[ESCAPED_MEMBER];
  return inner && typeof inner === 'object' && Object.keys(m).length === 1
    ? (inner as Record<string, unknown>)
    : m;
}

/** Plaintext as stored (unescaped). */
export const plainText = (v: string) => (v.startsWith(ESCAPED) ? v.slice(ESCAPED.length) : v);

/**
 * A bank's codec: AES-256-GCM encryption and keyed hashes (HMAC-SHA256), with keys derived
 * (HKDF-SHA256) from the bank's one data key.
 */
export class BankCodec {
  readonly #enc: Buffer;
  readonly #mac: Buffer;

  constructor(dataKey: Buffer) {
    this.#enc = Buffer.from(hkdfSync('sha256', dataKey, Buffer.alloc(0), 'mnemo/v1/encrypt', 32));
    this.#mac = Buffer.from(hkdfSync('sha256', dataKey, Buffer.alloc(0), 'mnemo/v1/hash', 32));
  }

  seal(plain: string, field: Field): string {
    // A random 96-bit nonce per value: far below the collision bound for any one bank's key.
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#enc, nonce);
    cipher.setAAD(Buffer.from(field));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return SEALED + Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** Opens a stored value: sealed ones are decrypted (a wrong key or tampering throws), plain ones unescaped. */
  open(stored: string, field: Field): string {
    if (!isSealed(stored)) return plainText(stored);
    return this.openBytes(Buffer.from(stored.slice(SEALED.length), 'base64url'), field).toString('utf8');
  }

  /**
   * A memory's embedding sealed: its float32 bytes under AES-256-GCM, bound to the memory id, so
   * the database holds nothing a nearest-word lookup could invert, and a vector cannot be moved
   * to another memory.
   */
  sealVector(memoryId: string, vector: Float32Array): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#enc, nonce);
    cipher.setAAD(Buffer.from(`embedding\u0000${memoryId}`));
    const bytes = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
    const body = Buffer.concat([cipher.update(bytes), cipher.final()]);
    return SEALED + Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** Opens a sealed embedding (a wrong key, another memory's vector or tampering throws). */
  openVector(memoryId: string, stored: string): Float32Array {
    if (!isSealed(stored)) throw new Error('not a sealed vector');
    const raw = Buffer.from(stored.slice(SEALED.length), 'base64url');
    if (raw.length < NONCE_BYTES + TAG_BYTES) throw new Error('truncated ciphertext');
    const decipher = createDecipheriv('aes-256-gcm', this.#enc, raw.subarray(0, NONCE_BYTES));
    decipher.setAAD(Buffer.from(`embedding\u0000${memoryId}`));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    const plain = Buffer.concat([
      decipher.update(raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES)),
      decipher.final(),
    ]);
    // A fresh, aligned copy: the decrypted buffer may sit at any offset of a shared pool.
    const out = new Float32Array(plain.length / 4);
    new Uint8Array(out.buffer).set(plain);
    return out;
  }

  /** Bytes sealed (a stored archive): nonce, ciphertext and tag, bound to what they are. */
  sealBytes(plain: Uint8Array, field: Field): Uint8Array {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#enc, nonce);
    cipher.setAAD(Buffer.from(field));
    return Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  }

  /** Opens sealed bytes (a wrong key, another field or tampering throws). */
  openBytes(sealed: Uint8Array, field: Field): Buffer {
    if (sealed.length < NONCE_BYTES + TAG_BYTES) throw new Error('truncated ciphertext');
    const raw = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
    const decipher = createDecipheriv('aes-256-gcm', this.#enc, raw.subarray(0, NONCE_BYTES));
    decipher.setAAD(Buffer.from(field));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    return Buffer.concat([
      decipher.update(raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES)),
      decipher.final(),
    ]);
  }

  #hash(domain: string, value: string): string {
    return createHmac('sha256', this.#mac).update(`${domain}\u0000${value}`).digest('hex').slice(0, HASH_HEX);
  }

  /** The keyed hash a keyword term is indexed (and searched) under. */
  term(term: string): string {
    return this.#hash('term', term);
  }

  /**
   * An entity key (normalised name) hashed word by word, so the store can still match whole
   * names, aliases and first or last names, without ever seeing one.
   */
  entityKey(key: string): string {
    return key
      .split(' ')
      .map((w) => this.#hash('word', w))
      .join(' ');
  }

  /** A conversation id as kept in sealed metadata, so memories of one session can still be found. */
  session(value: string): string {
    return this.#hash('session', value);
  }

  /** A keyed content hash: an unkeyed one would let anyone confirm a guessed memory. */
  contentHash(hash: string): string {
    return this.#hash('content', hash);
  }
}
