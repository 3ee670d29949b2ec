import type { Migration } from './migration.js';

export default {
  version: 10,
  name: 'bank generation',
  sql: `
-- Bumped by every write that can change what Recall returns from the bank (its memories, their
-- entities and embeddings, its config, its space), in the transaction of the write: a cached
-- Recall answer is valid while the generation it was computed at is current.
ALTER TABLE banks ADD COLUMN generation bigint NOT NULL DEFAULT 0;
`,
} satisfies Migration;
