import type { Migration } from './migration.js';

export default {
  version: 15,
  name: 'encrypted banks: sealed vectors',
  sql: `
-- An encrypted bank's embeddings are sealed like its text (AES-256-GCM under the bank's data
-- key): the plain vector column stays NULL, since the nearest words of a plain vector in the
-- public word-vector table give the memory's words back. Such banks are searched in memory.
ALTER TABLE memories ADD COLUMN embedding_sealed text;
-- Moved when vectors of existing memories change (a re-embed): in-memory copies reload.
ALTER TABLE banks ADD COLUMN vectors_version bigint NOT NULL DEFAULT 0;
-- Encrypted banks written before this hold plain vectors: their conversion seals them.
UPDATE bank_keys k SET converting = true FROM banks b
  WHERE b.project_id = k.project_id AND b.id = k.bank_id AND b.config->>'encryption' = 'managed'
    AND EXISTS (SELECT 1 FROM memories m WHERE m.project_id = k.project_id AND m.bank_id = k.bank_id
                AND m.embedding IS NOT NULL);
INSERT INTO operations (project_id, bank_id, id, kind, payload)
  SELECT k.project_id, k.bank_id, gen_random_uuid(), 'reencrypt', '{}'::jsonb FROM bank_keys k
  WHERE k.converting AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.project_id = k.project_id
    AND o.bank_id = k.bank_id AND o.kind = 'reencrypt' AND o.status IN ('pending', 'processing'));
`,
} satisfies Migration;
