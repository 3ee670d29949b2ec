import type { Migration } from './migration.js';

export default {
  version: 48,
  name: 'operations: the charge a queued operation holds',
  sql: `
-- What a queued Retain or import was charged when it was queued (its items of the day and its
-- budget counters, with their windows), less what was given back: an operation that fails gives
-- back the part it did not store in the transaction that marks it failed, so exactly once.
ALTER TABLE operations ADD COLUMN charge jsonb;
`,
} satisfies Migration;
