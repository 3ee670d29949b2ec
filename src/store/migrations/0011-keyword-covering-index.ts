import type { Migration } from './migration.js';

export default {
  version: 11,
  name: 'keyword search: postings read from the index alone',
  sql: `
-- The primary key of memory_terms carries each posting's tf and document length, so the keyword
-- search reads postings by an index-only scan instead of one heap page per posting (on the
-- embedded engine, 22k postings of a common term: 260 ms -> 20 ms). Index-only scans need the
-- visibility map, which VACUUM keeps: autovacuum on PostgreSQL, maintainStatistics on PGlite.
CREATE UNIQUE INDEX memory_terms_covering ON memory_terms (project_id, bank_id, term, memory_id) INCLUDE (tf, dl);
ALTER TABLE memory_terms DROP CONSTRAINT memory_terms_pkey;
ALTER TABLE memory_terms ADD CONSTRAINT memory_terms_pkey PRIMARY KEY USING INDEX memory_terms_covering;
`,
} satisfies Migration;
