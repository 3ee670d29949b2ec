import type { Migration } from './migration.js';

export default {
  version: 19,
  name: 'audit: unauthenticated refusals beyond a per-minute number are counted in one row',
  sql: `
-- An unauthenticated flood wrote one audit row per request. Refusals are counted per project
-- and minute (shared by every process on the database); past the first ones, a minute's
-- refusals add to one aggregate audit row whose count says how many it stands for.
CREATE TABLE audit_refusals (
  project_id text NOT NULL,
  minute timestamptz NOT NULL,
  refused integer NOT NULL,
  PRIMARY KEY (project_id, minute)
);
ALTER TABLE audit ADD COLUMN count integer;
CREATE UNIQUE INDEX audit_aggregate ON audit (project_id, request_id) WHERE count IS NOT NULL;
`,
} satisfies Migration;
