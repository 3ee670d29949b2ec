import type { Migration } from './migration.js';

export default {
  version: 9,
  name: 'temporal search: index of long occurred spans',
  sql: `
-- Temporal recall finds occurred ranges by their start when they span at most 31 days
-- (search.ts LONG_SPAN); the longer ones ("last year", "in the 90s") are few and found here.
CREATE INDEX memories_long_spans ON memories (project_id, bank_id, occurred_start)
  WHERE occurred_end - occurred_start > interval '31 days';
`,
} satisfies Migration;
