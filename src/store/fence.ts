import { AsyncLocalStorage } from 'node:async_hooks';
import type { Db, Queryable } from './db.js';

/**
 * One incarnation of a bank: its id and the instant its row was created. A bank deleted and
 * created again under the same id is another incarnation (its row is new).
 */
export interface BankIncarnation {
  projectId: string;
  bankId: string;
  /** `banks.created_at` as PostgreSQL prints it (microseconds: a Date would round them away). */
  createdAt: string;
}

/**
 * The bank a job runs for went (deleted, perhaps created again since under the same id): the job
 * must write nothing more, and cannot finish.
 */
export class BankGone extends Error {
  constructor(readonly bankId: string) {
    super(`bank '${bankId}' was deleted while the operation ran`);
    this.name = 'BankGone';
  }
}

/**
 * The operation a job's slice writes for is no longer held by its worker (cancelled, or taken
 * over by another after its lease ran out): the slice's transaction writes nothing.
 */
export class OperationLost extends Error {
  constructor(readonly operationId: string) {
    super(`operation '${operationId}' is no longer held by this worker (cancelled or taken over)`);
    this.name = 'OperationLost';
  }
}

const fences = new AsyncLocalStorage<BankIncarnation>();

/**
 * Runs `fn` (a job's run, on its worker) fenced to one incarnation of its bank: every write
 * transaction it opens first checks, under a key-share lock on the bank's row held until it
 * commits, that this incarnation still exists, and fails with `BankGone` otherwise. A bank's
 * deletion locks the row for update, so it either waits for such a transaction (and then deletes
 * what it wrote with the rest of the bank) or went before it (and the transaction writes nothing,
 * in the deleted bank or in a new one of the same id).
 */
export const withinBank = <T>(bank: BankIncarnation, fn: () => Promise<T>): Promise<T> =>
  fences.run(bank, fn);

/** The fence of the running job when it is fenced to this bank. */
export function fenceOf(projectId: string, bankId: string): BankIncarnation | undefined {
  const f = fences.getStore();
  return f && f.projectId === projectId && f.bankId === bankId ? f : undefined;
}

/** At the start of a write transaction: the running job's bank incarnation, if any, still exists. */
export async function checkFence(tx: Queryable): Promise<void> {
  const f = fences.getStore();
  if (!f) return;
  const rows = await tx.query(
    'SELECT 1 FROM banks WHERE project_id = $1 AND id = $2 AND created_at = $3::timestamptz FOR KEY SHARE',
    [f.projectId, f.bankId, f.createdAt],
  );
  if (rows.length === 0) throw new BankGone(f.bankId);
}

/**
 * Runs a single-statement write of the bank in a transaction when a job fenced to the bank runs
 * it (so it is checked as every write transaction is), as one statement otherwise.
 */
export function fencedWrite<T>(
  db: Db,
  projectId: string,
  bankId: string,
  write: (q: Queryable) => Promise<T>,
): Promise<T> {
  return fenceOf(projectId, bankId) ? db.transaction(write) : write(db);
}
