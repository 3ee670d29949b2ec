import type { Migration } from './migration.js';

export default {
  version: 18,
  name: 'fair operation claims',
  sql: `
-- Where a sliced operation (consolidation, re-embed, re-encryption, a big async Retain) got to:
-- the next claim goes on from there.
ALTER TABLE operations ADD COLUMN progress jsonb;
-- When a project ('' bank) and each of its banks last had an operation claimed: the next claim
-- goes to the project, then the bank, that waited longest, so one tenant's backlog cannot starve
-- another's work.
CREATE TABLE operation_turns (
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  bank_id text NOT NULL,
  claimed_at timestamptz NOT NULL,
  PRIMARY KEY (project_id, bank_id)
);
-- Banks with work, found by skipping through this index, and a bank's next operation.
CREATE INDEX operations_fair ON operations (project_id, bank_id, run_after, created_at)
  WHERE status IN ('pending', 'processing');
`,
} satisfies Migration;
