import type { Migration } from './migration.js';

export default {
  version: 44,
  name: "vector fallback: a bank's memories of one type, newest first",
  sql: `
-- When a type filter passes few memories, the HNSW walk comes back short and the vector channel
-- completes it by an exact search bounded to the bank's newest rows (search.ts
-- recentExactVectorSql). This index lets that search also read the newest rows of each type
-- asked for, however old, so a rare type is searched whole, still in a bounded number of rows.
CREATE INDEX memories_bank_type_seq ON memories (project_id, bank_id, type, seq DESC);
`,
} satisfies Migration;
