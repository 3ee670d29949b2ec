import type { Migration } from './migration.js';

export default {
  version: 33,
  name: 'document-transfer archives and operation results',
  sql: `
-- What a finished operation hands back beside its counts (an export's download key and size,
-- an import's per-document outcome). Null for the kinds that say nothing more.
ALTER TABLE operations ADD COLUMN result_metadata jsonb;

-- The archives of document-transfer exports, kept until they expire (a day) for their download.
-- key: the bank (base64url) and 256 random bits: the download names its bank, nothing is guessable.
-- data: the ZIP, or for an encrypted bank the ZIP sealed under the bank's data key.
CREATE TABLE transfer_archives (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  key text NOT NULL,
  operation_id uuid NOT NULL,
  filename text NOT NULL,
  byte_size integer NOT NULL,
  sealed boolean NOT NULL,
  data bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (project_id, bank_id, key),
  FOREIGN KEY (project_id, bank_id) REFERENCES banks(project_id, id) ON DELETE CASCADE
);
CREATE INDEX transfer_archives_expiry ON transfer_archives (expires_at);
`,
} satisfies Migration;
