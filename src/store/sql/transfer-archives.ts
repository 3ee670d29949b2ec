import type { Db } from '../db.js';
import { fencedWrite } from '../fence.js';
import { encryptionChanged } from './encryption.js';

/** A stored document-transfer archive: what its download needs, and its bytes as stored. */
export interface TransferArchiveRecord {
  bank_id: string;
  key: string;
  operation_id: string;
  filename: string;
  /** Bytes of the ZIP itself (not of its sealed form). */
  byte_size: number;
  /** Whether `data` is sealed under the bank's data key. */
  sealed: boolean;
  data: Uint8Array;
  created_at: Date;
  expires_at: Date;
}

export type NewTransferArchive = Omit<TransferArchiveRecord, 'bank_id' | 'created_at'>;

/** The archives of document-transfer exports, kept for their download until they expire. */
export interface TransferArchiveStore {
  /**
   * Stores an archive; false (nothing stored) when the bank is gone meanwhile. Refuses (a
   * `conflict` whose reason is `ENCRYPTION_CHANGED`) an archive whose `sealed` is not the form
   * the bank's config wants now.
   */
  saveArchive(projectId: string, bankId: string, archive: NewTransferArchive): Promise<boolean>;
  /** The archive of the bank under `key`, unless it expired before `now`; null otherwise. */
  getArchive(
    projectId: string,
    bankId: string,
    key: string,
    now: Date,
  ): Promise<TransferArchiveRecord | null>;
  /** Deletes the archives of every bank that expired before `now`; how many went. */
  deleteExpiredArchives(now: Date): Promise<number>;
  /** Deletes the bank's archives past its `keep` newest (what repeated exports leave); how many went. */
  pruneArchives(projectId: string, bankId: string, keep: number): Promise<number>;
}

const COLUMNS =
  'bank_id, key, operation_id::text AS operation_id, filename, byte_size, sealed, data, created_at, expires_at';

export function transferArchiveQueries(db: Db): TransferArchiveStore {
  return {
    async saveArchive(projectId, bankId, a) {
      return db.transaction(async (tx) => {
        // Under the bank row's lock, which a switch of its encryption takes too: an archive
        // sealed (or not) for the form the bank no longer wants is refused, never stored.
        const wanted = await tx.query<{ managed: boolean }>(
          `SELECT coalesce(config->>'encryption', 'none') = 'managed' AS managed FROM banks
            WHERE project_id = $1 AND id = $2 FOR SHARE`,
          [projectId, bankId],
        );
        if (!wanted[0]) return false;
        if (wanted[0].managed !== a.sealed) throw encryptionChanged(bankId);
        const rows = await tx.query(
          `INSERT INTO transfer_archives (project_id, bank_id, key, operation_id, filename, byte_size, sealed, data, expires_at)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9
          WHERE EXISTS (SELECT 1 FROM banks WHERE project_id = $1 AND id = $2)
         ON CONFLICT (project_id, bank_id, key) DO NOTHING
         RETURNING 1`,
          [
            projectId,
            bankId,
            a.key,
            a.operation_id,
            a.filename,
            a.byte_size,
            a.sealed,
            a.data,
            a.expires_at.toISOString(),
          ],
        );
        return rows.length > 0;
      });
    },

    async getArchive(projectId, bankId, key, now) {
      const rows = await db.query<TransferArchiveRecord>(
        `SELECT ${COLUMNS} FROM transfer_archives
          WHERE project_id = $1 AND bank_id = $2 AND key = $3 AND expires_at > $4`,
        [projectId, bankId, key, now.toISOString()],
      );
      const row = rows[0];
      // pg answers a Buffer, PGlite a Uint8Array: one type for the callers.
      return row ? { ...row, data: new Uint8Array(row.data) } : null;
    },

    async deleteExpiredArchives(now) {
      const rows = await db.query('DELETE FROM transfer_archives WHERE expires_at <= $1 RETURNING 1', [
        now.toISOString(),
      ]);
      return rows.length;
    },

    async pruneArchives(projectId, bankId, keep) {
      // Fenced when an export job prunes: one of a bank deleted and created again must not prune the new bank's.
      const rows = await fencedWrite(db, projectId, bankId, (q) =>
        q.query(
          `DELETE FROM transfer_archives
            WHERE project_id = $1 AND bank_id = $2 AND key NOT IN (
              SELECT key FROM transfer_archives WHERE project_id = $1 AND bank_id = $2
               ORDER BY created_at DESC, key DESC LIMIT $3)
           RETURNING 1`,
          [projectId, bankId, keep],
        ),
      );
      return rows.length;
    },
  };
}
