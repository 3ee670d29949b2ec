import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ReceiptRecord, TenancyStore, ReceiptStore } from '../store/store.js';
import { type BankScope, inScope } from './bank-scope.js';
import { notFound } from './errors.js';
import { isUuid } from './ids.js';
import type { Deps } from './services.js';

/** A forget's receipt as the API shows it: what was deleted, signed by the server. */
export interface Receipt {
  id: string;
  at: Date;
  subject: { kind: 'memory' | 'document' | 'bank'; bank_id: string; id: string | null };
  deleted: Record<string, number>;
  key_id: string;
  signature: string;
}

/** What the signature covers (everything but itself), as a receipt or a request gives it. */
export type ReceiptFields = Omit<Receipt, 'signature' | 'at'> & { at: Date | string };

/** The settings row of the random signing key kept when no master key is configured. */
const STORED_KEY = 'receipt_signing_key';

/** The purpose the signing key is derived for from the master key (never the key of anything else). */
const DERIVED_PURPOSE = 'forget-receipts:v1';

/**
 * The server's receipt signing key: derived from the master key when one is configured (a
 * database alone cannot forge a receipt), else a random key made once and kept in the database
 * (whoever can read the database can forge one; docs/security.md says so).
 */
export async function signingKey(s: Deps<TenancyStore, 'keyring'>): Promise<Buffer> {
  if (s.keyring) return s.keyring.derive(DERIVED_PURPOSE);
  return Buffer.from(
    await s.store.setting(STORED_KEY, () => randomBytes(32).toString('base64url')),
    'base64url',
  );
}

/** The public name of a signing key: which key signed a receipt, without revealing it. */
export const keyId = (key: Buffer) =>
  createHmac('sha256', key).update('mnemo receipt key id').digest('hex').slice(0, 16);

/**
 * The bytes a receipt's signature is the HMAC-SHA256 of: a JSON array of a version tag, the
 * project, the receipt's fields, and its counts sorted by kind (docs/api.md, "Receipts").
 */
export function canonicalReceipt(projectId: string, r: ReceiptFields): string {
  const at = typeof r.at === 'string' ? new Date(r.at) : r.at;
  const counts = Object.entries(r.deleted).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([
    'mnemo-receipt-v1',
    projectId,
    r.id,
    Number.isNaN(at.getTime()) ? String(r.at) : at.toISOString(),
    r.subject.kind,
    r.subject.bank_id,
    r.subject.id,
    counts,
    r.key_id,
  ]);
}

/** base64url HMAC-SHA256 of the receipt's canonical form. */
export const signReceipt = (key: Buffer, projectId: string, r: ReceiptFields) =>
  createHmac('sha256', key).update(canonicalReceipt(projectId, r)).digest('base64url');

/** The stored record as the API shows it. */
export const receiptView = (r: ReceiptRecord): Receipt => ({
  id: r.id,
  at: r.at,
  subject: { kind: r.subject_kind, bank_id: r.bank_id, id: r.subject_id },
  deleted: r.deleted,
  key_id: r.key_id,
  signature: r.signature,
});

/**
 * A receipt of the project, to whoever may read its bank: a bank-scoped key sees only receipts
 * of its banks (others are 404, as if they did not exist). The bank may be gone: the receipt is
 * checked against the bank id it names.
 */
export async function getReceipt(
  s: Deps<ReceiptStore>,
  projectId: string,
  id: string,
  banks: BankScope,
): Promise<Receipt> {
  const r = isUuid(id) ? await s.store.getReceipt(projectId, id) : null;
  if (!r || !inScope(banks, r.bank_id)) throw notFound(`receipt '${id}'`);
  return receiptView(r);
}

/**
 * Whether this server signed the receipt as given, for this project: `valid`, or why not
 * (`unknown_key`: signed by another key, e.g. before the master key changed; `bad_signature`:
 * some field differs from what was signed).
 */
export async function verifyReceipt(
  s: Deps<TenancyStore, 'keyring'>,
  projectId: string,
  r: Receipt | (ReceiptFields & { signature: string }),
): Promise<{ valid: boolean; reason: 'unknown_key' | 'bad_signature' | null; key_id: string }> {
  const key = await signingKey(s);
  const current = keyId(key);
  if (r.key_id !== current) return { valid: false, reason: 'unknown_key', key_id: current };
  const want = Buffer.from(signReceipt(key, projectId, r));
  const got = Buffer.from(r.signature);
  const valid = want.length === got.length && timingSafeEqual(want, got);
  return { valid, reason: valid ? null : 'bad_signature', key_id: current };
}
