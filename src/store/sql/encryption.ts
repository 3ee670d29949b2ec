import { ENCRYPTION_CHANGED } from '../sealed.js';
import { AppError } from '../../contract/errors.js';
import type { Db, Queryable } from '../db.js';
import { fencedWrite } from '../fence.js';
import { lockBank } from './bank-lock.js';

/** A bank's wrapped data key (managed encryption). */
export interface BankKeyRecord {
  wrapped: string;
  fingerprint: string;
  /** A background operation is moving the bank's rows to the form its config wants. */
  converting: boolean;
}

/** A bank's wanted form (its config) and its data key, if it has one. */
export interface BankEncryption {
  target: 'none' | 'managed';
  key: BankKeyRecord | null;
}

/** Banks' data keys (managed encryption): made once per bank, rewrapped when the master key rotates. */
export interface BankKeyStore {
  /** The bank's wanted form (its config) and its data key, if it has one; null for no such bank. */
  bankEncryption(projectId: string, bankId: string): Promise<BankEncryption | null>;
  /** Stores the bank's data key unless it has one already; returns the one that is kept. */
  createBankKey(
    projectId: string,
    bankId: string,
    key: { wrapped: string; fingerprint: string },
    converting: boolean,
  ): Promise<BankKeyRecord>;
  setBankKeyConverting(projectId: string, bankId: string, converting: boolean): Promise<void>;
  listBankKeys(): Promise<{ project_id: string; bank_id: string; wrapped: string; fingerprint: string }[]>;
  /** Replaces wrapped keys (master key rotation), all in one transaction. */
  rewrapBankKeys(
    updates: { project_id: string; bank_id: string; wrapped: string; fingerprint: string }[],
  ): Promise<void>;
  /** Banks whose config asks for encryption but that have no data key yet. */
  countUnkeyedEncryptedBanks(): Promise<number>;
}

const KEY_COLUMNS = 'wrapped_key AS wrapped, master_fingerprint AS fingerprint, converting';

/**
 * The columns of a bank's encryption state over `banks b LEFT JOIN bank_keys k` (on the bank),
 * read back by `encryptionOf`.
 */
export const ENCRYPTION_COLUMNS = `coalesce(b.config->>'encryption', 'none') AS target, k.wrapped_key AS wrapped,
  k.master_fingerprint AS fingerprint, k.converting`;

/** A row of ENCRYPTION_COLUMNS as the bank's encryption state. */
export interface EncryptionRow {
  target: string;
  wrapped: string | null;
  fingerprint: string | null;
  converting: boolean | null;
}

export const encryptionOf = (r: EncryptionRow): BankEncryption => ({
  target: r.target === 'managed' ? 'managed' : 'none',
  key: r.wrapped ? { wrapped: r.wrapped, fingerprint: r.fingerprint!, converting: r.converting! } : null,
});

/**
 * `AND (...)` per group of alternative terms: the memory (alias `m`) holds one of each group's
 * terms, in the index or, invalidated, kept in its row. Lets `q` match whole words in banks
 * whose text the database cannot read.
 */
export function termGroupsClause(groups: string[][], params: unknown[], alias: string): string {
  return groups
    .map((group) => {
      params.push(group);
      const n = params.length;
      return ` AND (EXISTS (SELECT 1 FROM memory_terms qt WHERE qt.project_id = ${alias}.project_id
        AND qt.bank_id = ${alias}.bank_id AND qt.memory_id = ${alias}.id AND qt.term = ANY($${n}::text[]))
        OR jsonb_exists_any(${alias}.retired_terms, $${n}::text[]))`;
    })
    .join('');
}

/**
 * Locks the bank row for a write of `memories` and refuses rows prepared in the form the bank no
 * longer wants (its encryption setting changed between preparing and writing): the caller
 * prepares them again. This is what keeps a conversion from ever finishing with a row behind.
 */
export async function lockBankForWrite(
  tx: Queryable,
  projectId: string,
  bankId: string,
  memories: { encrypted?: boolean }[],
): Promise<void> {
  const wanted = await lockTarget(tx, projectId, bankId);
  if (wanted !== null && memories.some((m) => (m.encrypted ?? false) !== wanted))
    throw encryptionChanged(bankId);
}

/** What was prepared in one form meets a bank that wants the other: the caller prepares it again. */
export const encryptionChanged = (bankId: string) =>
  new AppError('conflict', `the encryption setting of bank '${bankId}' changed during the write; retry`, {
    extra: { reason: ENCRYPTION_CHANGED },
  });

/** Locks the bank row (`lockBank`) and says whether its config wants encryption. */
export async function lockTarget(tx: Queryable, projectId: string, bankId: string): Promise<boolean | null> {
  const target = await lockBank(tx, projectId, bankId);
  return target === null ? null : target === 'managed';
}

/** Bank data keys (managed encryption); the batches that convert a bank's rows are in conversion.ts. */
export function encryptionQueries(db: Db): BankKeyStore {
  return {
    async bankEncryption(projectId, bankId) {
      const rows = await db.query<EncryptionRow>(
        `SELECT ${ENCRYPTION_COLUMNS}
         FROM banks b LEFT JOIN bank_keys k ON k.project_id = b.project_id AND k.bank_id = b.id
         WHERE b.project_id = $1 AND b.id = $2`,
        [projectId, bankId],
      );
      const r = rows[0];
      return r ? encryptionOf(r) : null;
    },

    async createBankKey(projectId, bankId, key, converting) {
      // A job's re-encryption creates a key only for the bank it ran for (store/fence.ts).
      await fencedWrite(db, projectId, bankId, (q) =>
        q.query(
          `INSERT INTO bank_keys (project_id, bank_id, wrapped_key, master_fingerprint, converting)
           VALUES ($1, $2, $3, $4, $5) ON CONFLICT (project_id, bank_id) DO NOTHING`,
          [projectId, bankId, key.wrapped, key.fingerprint, converting],
        ),
      );
      // A key another process created first wins: a bank has one data key.
      const rows = await db.query<BankKeyRecord>(
        `SELECT ${KEY_COLUMNS} FROM bank_keys WHERE project_id = $1 AND bank_id = $2`,
        [projectId, bankId],
      );
      return rows[0]!;
    },

    async setBankKeyConverting(projectId, bankId, converting) {
      // Fenced should a job ever set it (today a config change does): as createBankKey.
      await fencedWrite(db, projectId, bankId, (q) =>
        q.query('UPDATE bank_keys SET converting = $3 WHERE project_id = $1 AND bank_id = $2', [
          projectId,
          bankId,
          converting,
        ]),
      );
    },

    listBankKeys: () =>
      db.query(
        `SELECT project_id, bank_id, wrapped_key AS wrapped, master_fingerprint AS fingerprint FROM bank_keys
         ORDER BY project_id, bank_id`,
      ),

    async rewrapBankKeys(updates) {
      if (updates.length === 0) return;
      await db.transaction(async (tx) => {
        await tx.query(
          `UPDATE bank_keys k SET wrapped_key = r.wrapped, master_fingerprint = r.fingerprint, rewrapped_at = now()
           FROM jsonb_to_recordset($1::jsonb) AS r(project_id text, bank_id text, wrapped text, fingerprint text)
           WHERE k.project_id = r.project_id AND k.bank_id = r.bank_id`,
          [JSON.stringify(updates)],
        );
      });
    },

    async countUnkeyedEncryptedBanks() {
      const rows = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM banks b WHERE b.config->>'encryption' = 'managed'
           AND NOT EXISTS (SELECT 1 FROM bank_keys k WHERE k.project_id = b.project_id AND k.bank_id = b.id)`,
      );
      return rows[0]!.n;
    },
  };
}
