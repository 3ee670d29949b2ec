import type { Db } from '../db.js';
import { BankGone, fenceOf } from '../fence.js';
import { EXACT_SEARCH_LIMIT } from '../exact-search.js';
import { bankIndexName } from './bank-index-name.js';
import { HNSW_DIMENSIONS } from './search.js';

/** Per-bank HNSW indexes, for banks past the exact-search size (store/exact-search.ts). */
export interface BankIndexStore {
  /** The vector size of a bank that should have an HNSW index of its own and has none yet, else null. */
  wantedBankIndex(projectId: string, bankId: string): Promise<number | null>;
  /** Builds the bank's own HNSW index for vectors of `dims` (without blocking writers on PostgreSQL). */
  buildBankIndex(projectId: string, bankId: string, dims: number): Promise<void>;
  /** Drops the bank's own indexes (after the bank is deleted). */
  dropBankIndexes(projectId: string, bankId: string): Promise<void>;
}

/**
 * A bank that is a small share of a large table gets an HNSW index of its own: a partial index
 * on its rows (`WHERE project_id = … AND bank_id = … AND vector_dims(embedding) = n`). The shared
 * per-size index then has to walk past every other bank's vectors to find this bank's (a 10k
 * bank among 100k vectors: ~35 ms instead of ~4 ms). PostgreSQL plans each query with its
 * parameter values, so the bank's index is chosen when it exists; nothing in the query changes.
 * A bank that holds most of the table is served well by the shared index and gets none.
 */
export const OWN_INDEX_SHARE = 0.5;

export { bankIndexName };

export function bankIndexQueries(db: Db): BankIndexStore {
  async function exists(name: string): Promise<'valid' | 'invalid' | null> {
    const rows = await db.query<{ valid: boolean }>(
      `SELECT i.indisvalid AS valid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
       WHERE c.relname = $1 AND c.relkind = 'i'`,
      [name],
    );
    return rows[0] ? (rows[0].valid ? 'valid' : 'invalid') : null;
  }

  return {
    async wantedBankIndex(projectId, bankId) {
      const rows = await db.query<{ n: number; total: number; dims: number | null }>(
        `SELECT b.memory_count AS n, (SELECT coalesce(sum(memory_count), 0)::float8 FROM banks) AS total,
           (SELECT vector_dims(m.embedding) FROM memories m
            WHERE m.project_id = b.project_id AND m.bank_id = b.id AND m.embedding IS NOT NULL
            ORDER BY m.seq DESC LIMIT 1) AS dims
         FROM banks b WHERE b.project_id = $1 AND b.id = $2`,
        [projectId, bankId],
      );
      const r = rows[0];
      if (!r || r.dims === null || !(HNSW_DIMENSIONS as readonly number[]).includes(r.dims)) return null;
      if (r.n <= EXACT_SEARCH_LIMIT || r.n >= OWN_INDEX_SHARE * r.total) return null;
      return (await exists(bankIndexName(projectId, bankId, r.dims))) === 'valid' ? null : r.dims;
    },

    async buildBankIndex(projectId, bankId, dims) {
      if (!(HNSW_DIMENSIONS as readonly number[]).includes(dims)) return;
      const name = bankIndexName(projectId, bankId, dims);
      const state = await exists(name);
      if (state === 'valid') return;
      // A concurrent build that failed leaves an invalid index behind: replace it.
      if (state === 'invalid') await db.exec(`DROP INDEX IF EXISTS ${name}`);
      // PostgreSQL builds without blocking writers; the embedded engine has one connection anyway.
      const how = db.engine === 'postgres' ? 'CONCURRENTLY IF NOT EXISTS' : 'IF NOT EXISTS';
      const rows = await db.query<{ sql: string }>(
        `SELECT format('CREATE INDEX ${how} %I ON memories USING hnsw ((embedding::vector(%s)) vector_cosine_ops)
           WHERE project_id = %L AND bank_id = %L AND vector_dims(embedding) = %s', $1::text, $2::int, $3::text, $4::text, $2::int) AS sql`,
        [name, dims, projectId, bankId],
      );
      await db.exec(rows[0]!.sql);
      // DDL is not fenced (CREATE INDEX CONCURRENTLY runs in no transaction): a job whose bank
      // was deleted meanwhile (store/fence.ts) drops the index it built over a bank of the same
      // id. A deletion after this check drops it itself (core/forget.ts).
      if (fenceOf(projectId, bankId)) {
        try {
          await db.transaction(async () => {});
        } catch (err) {
          if (err instanceof BankGone) await db.exec(`DROP INDEX IF EXISTS ${name}`);
          throw err;
        }
      }
    },

    async dropBankIndexes(projectId, bankId) {
      const how = db.engine === 'postgres' ? 'CONCURRENTLY IF EXISTS' : 'IF EXISTS';
      for (const dims of HNSW_DIMENSIONS) {
        const name = bankIndexName(projectId, bankId, dims);
        if (await exists(name)) await db.exec(`DROP INDEX ${how} ${name}`);
      }
    },
  };
}
