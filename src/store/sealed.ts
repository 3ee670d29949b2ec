/**
 * What the store knows of encrypted values, shared with the encryption layer (core/crypto) that
 * makes them: the store's SQL tells the two stored forms apart by this prefix, and names this
 * reason on the conflict it raises when a bank's setting changed under a write.
 */

/**
 * How a value is stored. Encrypted values and escaped plaintext both start with U+0001, which
 * makes the two forms unambiguous: a plaintext that happens to start with U+0001 is escaped on
 * the way in and unescaped on the way out, so nothing plain can pass for a ciphertext.
 */
export const SEALED = '\u0001e1:';

/** `extra.reason` of the store's conflict when a bank's encryption setting changed under a write. */
export const ENCRYPTION_CHANGED = 'encryption_changed';
