/**
 * One versioned schema migration, shared by both engines. A migration a database may have
 * applied is never edited (its checksum is pinned in test/store/migrations.test.ts): a schema
 * change is a new file with the next number. Every data table is keyed by project (and bank
 * where it holds bank data) so that it can later be distributed by bank. A migration that changes
 * a bank's memories or postings moves its `generation`, as every writer does: running servers'
 * copies of a bank's postings (`keyword-memory.ts`) are checked against it.
 */
export interface Migration {
  /** Recorded in schema_migrations; never reused or renumbered (17 was never used). */
  version: number;
  /** Recorded beside the version; shown by `mnemo migrate --status`. */
  name: string;
  sql: string;
}
