import type { Migration } from './migration.js';

export default {
  version: 41,
  name: 'fair webhook delivery claims; one evaluation of a bank at a time',
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
-- The evaluation of a bank under way, if any (a lease: a process that dies gives it up when it
-- runs out): a run of up to 1,000 Recalls on the request path, one per bank at a time whatever
-- the number of instances. The row goes when the run ends; no foreign key, so that a bank
-- deleted meanwhile costs nothing here.
CREATE TABLE evaluation_runs (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  holder text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (project_id, bank_id)
);
`,
} satisfies Migration;
