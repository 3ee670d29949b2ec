import type { Migration } from './migration.js';

export default {
  version: 22,
  name: 'evaluations: recall evaluation runs kept per bank',
  sql: `
-- One row per evaluation run: its figures in columns (listed and charted without reading the
-- cases), its cases as JSON text. The cases hold the bank's text (the queries): in an encrypted
-- bank the whole text is sealed, which its prefix shows, like a directive's.
CREATE TABLE evaluations (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  id uuid NOT NULL,
  seq bigserial NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  k integer NOT NULL,
  options jsonb NOT NULL DEFAULT '{}',
  case_count integer NOT NULL,
  recall_at_k double precision NOT NULL,
  mrr double precision NOT NULL,
  channels jsonb NOT NULL,
  cases text NOT NULL,
  PRIMARY KEY (project_id, bank_id, id),
  FOREIGN KEY (project_id, bank_id) REFERENCES banks(project_id, id) ON DELETE CASCADE
);
CREATE INDEX evaluations_bank_seq ON evaluations (project_id, bank_id, seq DESC);
`,
} satisfies Migration;
