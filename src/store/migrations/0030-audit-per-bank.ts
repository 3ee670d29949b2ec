import type { Migration } from './migration.js';

export default {
  version: 30,
  name: 'audit per bank: transport, and indexes for a bank’s entries by time and by action',
  sql: `
-- How a request came: NULL for HTTP (every entry before this migration), 'mcp' for a tool call.
ALTER TABLE audit ADD COLUMN transport text;
-- A bank's entries of a period (audit-logs/stats, date filters) and of one action (the listing's
-- action filter) are index ranges, never a scan of the bank's whole history.
CREATE INDEX audit_bank_at ON audit (project_id, bank_id, at);
CREATE INDEX audit_bank_action ON audit (project_id, bank_id, action, id DESC);
`,
} satisfies Migration;
