import type { Migration } from './migration.js';

export default {
  version: 5,
  name: 'managed encryption',
  sql: `
-- One random data key per encrypted bank, wrapped (AES-256-GCM) by the server master key;
-- never deleted while the bank lives, so a row written in either form stays readable.
-- converting: a background operation is moving the bank's rows to the form its config wants.
CREATE TABLE bank_keys (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  wrapped_key text NOT NULL,
  master_fingerprint text NOT NULL,
  converting boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  rewrapped_at timestamptz,
  PRIMARY KEY (project_id, bank_id),
  FOREIGN KEY (project_id, bank_id) REFERENCES banks(project_id, id) ON DELETE CASCADE
);
-- Which form each row is in, so a conversion knows what is left and can resume.
ALTER TABLE memories ADD COLUMN encrypted boolean NOT NULL DEFAULT false;
ALTER TABLE entities ADD COLUMN encrypted boolean NOT NULL DEFAULT false;
`,
} satisfies Migration;
