import type { Migration } from './migration.js';

export default {
  version: 2,
  name: 'operations and idempotency',
  sql: `
CREATE TABLE operations (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  id uuid NOT NULL,
  kind text NOT NULL,
  status text NOT NULL DEFAULT 'pending',
  payload jsonb NOT NULL,
  items_count integer NOT NULL DEFAULT 0,
  memories_created integer NOT NULL DEFAULT 0,
  error text,
  attempts integer NOT NULL DEFAULT 0,
  run_after timestamptz NOT NULL DEFAULT now(),
  locked_by text,
  locked_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, bank_id, id),
  FOREIGN KEY (project_id, bank_id) REFERENCES banks(project_id, id) ON DELETE CASCADE
);
CREATE INDEX operations_claimable ON operations (run_after) WHERE status IN ('pending', 'processing');
CREATE INDEX operations_bank ON operations (project_id, bank_id, created_at DESC);

CREATE TABLE idempotency (
  project_id text NOT NULL,
  key text NOT NULL,
  request_hash text NOT NULL,
  status integer NOT NULL DEFAULT 0,
  response jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, key)
);
CREATE INDEX idempotency_age ON idempotency (created_at);
`,
} satisfies Migration;
