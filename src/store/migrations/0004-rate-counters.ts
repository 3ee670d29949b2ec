import type { Migration } from './migration.js';

export default {
  version: 4,
  name: 'rate limit counters',
  sql: `
-- Fixed-window counters shared by every mnemo process on the database: requests per minute
-- (per project, subject '', and per key, subject = key id) and retained items per day.
-- One upsert per request; old windows are pruned.
CREATE TABLE rate_counters (
  project_id text NOT NULL,
  kind text NOT NULL,
  subject text NOT NULL,
  window_start timestamptz NOT NULL,
  count bigint NOT NULL,
  lim bigint,
  PRIMARY KEY (project_id, kind, subject, window_start)
);
CREATE INDEX rate_counters_window ON rate_counters (window_start);
`,
} satisfies Migration;
