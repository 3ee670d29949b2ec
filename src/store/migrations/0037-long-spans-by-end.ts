import type { Migration } from './migration.js';

export default {
  version: 37,
  name: 'temporal search: long spans found by their end',
  sql: `
-- The long spans over a window's middle (search.ts temporalSql) were found by their start: every
-- long span that starts before the middle, then each row read to test its end. A window later
-- than most of a bank's long spans (any "last week" over a year of "in 2023" memories) read them
-- all for none (1,429 rows, a fifth of the temporal channel's time, at 10k). By their end, the
-- spans still running at the middle are the ones read, and the start is tested in the index.
CREATE INDEX memories_long_spans_end ON memories (project_id, bank_id, occurred_end, occurred_start)
  WHERE occurred_end - occurred_start > interval '31 days';
`,
} satisfies Migration;
