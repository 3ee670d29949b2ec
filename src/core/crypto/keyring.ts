import { hkdfSync } from 'node:crypto';
import { AppError } from '../errors.js';
import { BankCodec } from './codec.js';
import { masterFingerprint, newDataKey, parseMasterKey, unwrapDataKey, wrapDataKey } from './master-key.js';

/** A bank's data key as stored: wrapped by the master key. */
export interface WrappedKey {
  wrapped: string;
  fingerprint: string;
}

/** Unwrapped codecs kept in memory; a bank's data key never changes, only its wrapping. */
const CACHE_LIMIT = 10_000;

/** The server's master key and the bank codecs it unlocks. */
export class Keyring {
  readonly fingerprint: string;
  readonly #master: Buffer;
  readonly #codecs = new Map<string, BankCodec>();

  constructor(master: Buffer) {
    this.#master = master;
    this.fingerprint = masterFingerprint(master);
  }

  /** From `MNEMO_MASTER_KEY`; null when it is not set. A malformed key throws. */
  static fromConfig(masterKey: string | undefined): Keyring | null {
    return masterKey ? new Keyring(parseMasterKey(masterKey)) : null;
  }

  /** A new random data key for a bank, wrapped, with its codec. */
  create(projectId: string, bankId: string): WrappedKey & { codec: BankCodec } {
    const dataKey = newDataKey();
    const wrapped = wrapDataKey(this.#master, dataKey, projectId, bankId);
    const codec = new BankCodec(dataKey);
    this.#remember(projectId, bankId, wrapped, codec);
    return { wrapped, fingerprint: this.fingerprint, codec };
  }

  /** The codec of a bank's wrapped key; a key wrapped by another master key is a clear error. */
  codec(projectId: string, bankId: string, key: WrappedKey): BankCodec {
    const cacheKey = `${projectId}\u0000${bankId}\u0000${key.wrapped}`;
    const hit = this.#codecs.get(cacheKey);
    if (hit) return hit;
    let dataKey: Buffer;
    try {
      dataKey = unwrapDataKey(this.#master, key.wrapped, projectId, bankId);
    } catch {
      throw new AppError(
        'unavailable',
        `the data key of bank '${bankId}' was wrapped by master key ${key.fingerprint}, not by the configured one (${this.fingerprint})`,
      );
    }
    const codec = new BankCodec(dataKey);
    this.#remember(projectId, bankId, key.wrapped, codec);
    return codec;
  }

  /**
   * A 32-byte key for `purpose` derived from the master key (HKDF-SHA256): never the master key
   * itself, and a different key for every purpose.
   */
  derive(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.#master, Buffer.alloc(0), `mnemo:${purpose}`, 32));
  }

  /** Drops the bank's unwrapped data keys from memory (its bank was deleted); how many were held. */
  forget(projectId: string, bankId: string): number {
    const prefix = `${projectId}\u0000${bankId}\u0000`;
    let n = 0;
    for (const key of this.#codecs.keys()) {
      if (key.startsWith(prefix)) {
        this.#codecs.delete(key);
        n++;
      }
    }
    return n;
  }

  /** Checks a wrapped key opens with this master key (start-up verification). */
  opens(projectId: string, bankId: string, wrapped: string): boolean {
    try {
      unwrapDataKey(this.#master, wrapped, projectId, bankId);
      return true;
    } catch {
      return false;
    }
  }

  #remember(projectId: string, bankId: string, wrapped: string, codec: BankCodec): void {
    if (this.#codecs.size >= CACHE_LIMIT) this.#codecs.clear();
    this.#codecs.set(`${projectId}\u0000${bankId}\u0000${wrapped}`, codec);
  }
}

/**
 * Re-wraps a data key from one master key to another; a key already wrapped by `next` is kept.
 * Throws when neither master key opens it.
 */
export function rewrap(
  previous: Buffer,
  next: Buffer,
  projectId: string,
  bankId: string,
  wrapped: string,
): string | null {
  try {
    unwrapDataKey(next, wrapped, projectId, bankId);
    return null;
  } catch {}
  const dataKey = unwrapDataKey(previous, wrapped, projectId, bankId);
  return wrapDataKey(next, dataKey, projectId, bankId);
}
