import type { Migration } from './migration.js';

export default {
  version: 14,
  name: 'idempotency keys per caller; replies of encrypted banks sealed; secrets withheld',
  sql: `
-- Keys were per project: any caller of the project could replay another's answer (a minted key,
-- a Retain made with a scope the replayer lacks). Now a key belongs to one caller of one
-- project. Old rows are 24-hour caches and are dropped.
DROP TABLE IF EXISTS idempotency;
CREATE TABLE idempotency (
  project_id text NOT NULL,
  caller text NOT NULL,
  key text NOT NULL,
  request_hash text NOT NULL,
  status integer NOT NULL DEFAULT 0,
  -- The answer; for an encrypted bank a JSON string sealed with its data key; for an answer that
  -- carried a secret (withheld) only its id.
  response jsonb,
  withheld boolean NOT NULL DEFAULT false,
  encrypted boolean NOT NULL DEFAULT false,
  bank_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, caller, key)
);
CREATE INDEX idempotency_age ON idempotency (created_at);
CREATE INDEX idempotency_bank ON idempotency (project_id, bank_id) WHERE bank_id IS NOT NULL;
`,
} satisfies Migration;
