import type { Migration } from './migration.js';

export default {
  version: 41,
  name: 'fair webhook delivery claims',
  sql: `
-- When each project last had a webhook delivery claimed: the next claim goes to the project that
-- waited longest, so one tenant's backlog (or a receiver that never answers, holding each
-- attempt for its timeout) cannot make another tenant's deliveries wait behind all of it.
CREATE TABLE webhook_turns (
  project_id text PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
  claimed_at timestamptz NOT NULL
);
-- The projects with pending deliveries, found by skipping through this index, and a project's
-- next due delivery.
CREATE INDEX webhook_deliveries_fair ON webhook_deliveries (project_id, next_attempt_at)
  WHERE status = 'pending';
`,
} satisfies Migration;
