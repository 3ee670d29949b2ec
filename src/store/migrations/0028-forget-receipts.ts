import type { Migration } from './migration.js';

export default {
  version: 28,
  name: 'forget receipts and re-consolidation of what a forgotten memory shared',
  sql: `
-- One row per forget (a memory, a document or a bank deleted): what was deleted, as counts, and
-- the server's HMAC over it. No content: ids and counts only. Not tied to the bank by a foreign
-- key: a receipt outlives what it is about (its bank_id is how access to it is checked).
CREATE TABLE receipts (
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  at timestamptz NOT NULL,
  bank_id text NOT NULL,
  subject_kind text NOT NULL,
  subject_id text,
  deleted jsonb NOT NULL,
  key_id text NOT NULL,
  signature text NOT NULL,
  PRIMARY KEY (project_id, id)
);
CREATE INDEX receipts_bank ON receipts (project_id, bank_id, at DESC);

-- Memories whose observation was deleted because a memory behind it was forgotten: the next
-- consolidation run consolidates them again (whatever their seq), then drops the row.
CREATE TABLE consolidation_redo (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  memory_id uuid NOT NULL,
  PRIMARY KEY (project_id, bank_id, memory_id),
  FOREIGN KEY (project_id, bank_id, memory_id) REFERENCES memories(project_id, bank_id, id) ON DELETE CASCADE
);
`,
} satisfies Migration;
