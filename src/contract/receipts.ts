import { z } from 'zod';
import { named } from './names.js';
import { DateOut } from './common.js';

/** What a forget was about. */
export const ReceiptSubject = z
  .object({
    kind: z.enum(['memory', 'document', 'bank']),
    bank_id: z.string(),
    id: z.string().nullable().meta({ description: 'The memory or document id; null for a bank' }),
  })
  .register(named, { name: 'ReceiptSubject' });

const receiptFields = {
  id: z.string().meta({ description: 'The receipt id: GET /receipts/{id} answers it again' }),
  subject: ReceiptSubject,
  deleted: z.record(z.string(), z.number().int()).meta({
    description:
      'Rows removed (or, for idempotency and operation_payloads, erased) by table, plus embeddings: the vectors that went with their memories',
  }),
  key_id: z.string().meta({ description: 'Which server key signed it (a fingerprint, not the key)' }),
  signature: z.string().meta({
    description: 'base64url HMAC-SHA256 of the receipt in canonical form (docs/api.md, Receipts)',
  }),
};

/**
 * The signed account of a forget (a memory, document or bank deleted with everything derived
 * from it): ids and counts, never content.
 */
export const Receipt = z.object({ ...receiptFields, at: DateOut }).register(named, { name: 'Receipt' });

export const ReceiptParam = z.object({
  id: z.string().meta({ param: { name: 'id', in: 'path' } }),
});

/** A receipt as a client holds it, to check it was signed by this server for this project. */
export const VerifyReceiptBody = z.object({ ...receiptFields, at: z.string().max(64) });

export const ReceiptVerdict = z.object({
  valid: z.boolean(),
  reason: z.enum(['unknown_key', 'bad_signature']).nullable().meta({
    description:
      'unknown_key: signed by another key (e.g. before the master key changed); bad_signature: a field differs from what was signed',
  }),
  key_id: z.string().meta({ description: 'The key this server signs with now' }),
});
