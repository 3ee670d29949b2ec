/**
 * Large fixtures the cheap way. Inserting a row into an HNSW index walks the graph to link it:
 * filling a bank of thousands of memories through the store costs about three times as much
 * with the shared vector indexes in place as without them and building them afterwards (4,000
 * memories on the embedded engine: 3.2 s of CPU against 1.0 s + 0.75 s). Tests that need banks
 * past the exact-search size fill them through the store with the indexes set aside, then build
 * them again from their own definitions: the same schema, the same rows, the same indexes.
 */
import type pg from 'pg';
import type { Queryable } from '../../src/store/db.js';

/**
 * Runs `fill` with the shared HNSW indexes of `memories` dropped, and builds them again, as they
 * were, before returning (also when `fill` throws). Banks' own indexes are left alone. `db` is
 * the store's database or, on PostgreSQL, another session's client.
 */
export async function withVectorIndexesBuiltAfter<T>(
  on: Queryable | pg.Client,
  fill: () => Promise<T>,
): Promise<T> {
  const db: Queryable =
    'exec' in on
      ? on
      : {
          query: async <R>(sql: string) => (await on.query(sql)).rows as R[],
          exec: async (sql: string) => void (await on.query(sql)),
        };
  const indexes = await db.query<{ name: string; definition: string }>(
    `SELECT indexname AS name, indexdef AS definition FROM pg_indexes
     WHERE schemaname = current_schema() AND tablename = 'memories'
       AND indexdef LIKE '%USING hnsw%' AND indexname NOT LIKE 'memories_hnsw_bank_%'`,
  );
  if (indexes.length === 0) throw new Error('no shared vector index on memories: has the schema changed?');
  for (const i of indexes) await db.exec(`DROP INDEX ${i.name}`);
  try {
    return await fill();
  } finally {
    for (const i of indexes) await db.exec(i.definition);
  }
}
