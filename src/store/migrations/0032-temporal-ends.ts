import type { Migration } from './migration.js';

export default {
  version: 32,
  name: 'temporal search: index of occurred ends',
  sql: `
-- Temporal recall reads each time outward from the window's middle and stops at its limit
-- (search.ts temporalSql): occurred spans ending before the middle, latest end first, and spans
-- over the middle, earliest end first, are read in the order of this index.
CREATE INDEX memories_bank_occurred_end ON memories (project_id, bank_id, (coalesce(occurred_end, occurred_start)));
`,
} satisfies Migration;
