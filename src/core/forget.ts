import { randomUUID } from 'node:crypto';
import type {
  ForgetSubject,
  ReceiptRecord,
  BankStore,
  OperationStore,
  ReceiptStore,
  TenancyStore,
  BankIndexStore,
} from '../store/store.js';
import { requireBank } from './banks.js';
import { scheduleConsolidation } from './consolidate/schedule.js';
import { notFound } from './errors.js';
import { undoneOfKind } from './operation-charges.js';
import { isUuid } from './ids.js';
import { queueRefreshes } from './mental-model-schedule.js';
import { keyId, type Receipt, receiptView, signingKey, signReceipt } from './receipts.js';
import type { Deps } from './services.js';

/**
 * A forget queues the deletion (operations) and signs its receipt (receipts, with the install's
 * signing key from tenancy); it reads the bank.
 */
export type ForgetStore = BankStore & OperationStore & ReceiptStore & TenancyStore;

/**
 * Deletes a memory, a document or a bank with everything derived from it (Store.forget says
 * what) and returns the signed receipt of what went. The receipt is stored with the deletion,
 * in one transaction: a receipt exists exactly when the deletion happened. A subject that does
 * not exist is 404 and changes nothing.
 */
export async function forget(
  s: Deps<ForgetStore, 'keyring' | 'now' | 'onEnqueue' | 'recallCache'>,
  projectId: string,
  bankId: string,
  subject: ForgetSubject,
): Promise<{ receipt: Receipt; memoryIds: string[] }> {
  await requireBank(s, projectId, bankId);
  const missing = () =>
    notFound(subject.kind === 'bank' ? `bank '${bankId}'` : `${subject.kind} '${subject.id}'`);
  if (subject.kind === 'memory' && !isUuid(subject.id)) throw missing();
  const key = await signingKey(s);
  const id = randomUUID();
  const at = new Date(s.now().getTime());
  const kid = keyId(key);
  const done = await s.store.forget(projectId, bankId, subject, {
    id,
    at,
    // A deleted bank's queued Retains and imports give back what they did not store.
    undone: undoneOfKind,
    seal: (deleted) => ({
      key_id: kid,
      signature: signReceipt(key, projectId, {
        id,
        at,
        subject: { kind: subject.kind, bank_id: bankId, id: subject.kind === 'bank' ? null : subject.id },
        deleted,
        key_id: kid,
      }),
    }),
  });
  if (!done) throw missing();
  await afterForget(s, projectId, bankId, done);
  return { receipt: receiptView(done.receipt), memoryIds: done.memoryIds };
}

/**
 * Deletes the bank with every row keyed by it (its data key first: crypto-shredding), and
 * answers with Hindsight's fields and the signed receipt.
 */
export async function deleteBank(
  s: Deps<ForgetStore & BankIndexStore, 'keyring' | 'now' | 'onEnqueue' | 'recallCache'>,
  projectId: string,
  bankId: string,
) {
  const { receipt } = await forget(s, projectId, bankId, { kind: 'bank' });
  await s.store.dropBankIndexes(projectId, bankId);
  const n = receipt.deleted.memories ?? 0;
  return {
    deleted: true as const,
    bank_id: bankId,
    memories_deleted: n,
    success: true as const,
    deleted_count: n,
    message: `bank '${bankId}' and its ${n} memories deleted`,
    receipt,
  };
}

/** Memories a forget deleted other than the observations derived from them. */
export const ownMemories = (r: Receipt) => (r.deleted.memories ?? 0) - (r.deleted.observations ?? 0);

/**
 * What this process holds outside the database about a forgotten subject. Recall answers of
 * the bank are no longer served (its generation moved in the forget's transaction, in every
 * process); this process drops them now rather than when they age out. Decrypted vectors and
 * data keys are dropped by the encrypting store's `forget`. Work the forget left to do is
 * queued: consolidation of the memories behind a deleted observation, refreshes of the mental
 * models whose content was erased.
 */
async function afterForget(
  s: Deps<BankStore & OperationStore, 'onEnqueue' | 'recallCache'>,
  projectId: string,
  bankId: string,
  done: { memoryIds: string[]; reconsolidate: number; receipt: ReceiptRecord },
): Promise<void> {
  s.recallCache?.forgetBank(projectId, bankId);
  // Memories behind a deleted observation wait for a consolidation run: queue one.
  if (done.reconsolidate > 0) await scheduleConsolidation(s, projectId, bankId);
  // Mental models whose content was erased wait for their refresh (a bank's went with it).
  if (done.receipt.subject_kind !== 'bank' && (done.receipt.deleted.mental_models ?? 0) > 0)
    await queueRefreshes(s, projectId, bankId);
}
