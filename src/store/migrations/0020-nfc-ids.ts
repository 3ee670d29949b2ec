import type { Migration } from './migration.js';

/**
 * Bank and document ids are put in Unicode NFC where they enter (api/nfc.ts), so a bank or
 * document stored earlier under another form of its id could no longer be named. This gives
 * each such id its NFC form; when that id is taken (an NFC twin, or an earlier row of the same
 * group), a deterministic legacy name instead: the NFC form (cut to fit 256 characters) +
 * `~legacy-` + the first 8 hex digits of the MD5 of the old id (all 32 if even that is taken).
 * Within a group the oldest row (then the smallest id) is renamed to the NFC form first. Each
 * rename is an audit entry (actor `system`, action `banks.id_normalized` or
 * `documents.id_normalized`, request id `migration-20:<old id>`).
 *
 * A bank's id is in the key of every table that holds its data, so all of them are renamed in
 * one statement (built from the schema's tables that have project_id and bank_id): foreign
 * keys are checked at its end, when parent and children agree again. An encrypted bank's data
 * key stays wrapped for its old id; `.<old id, base64url>` appended to the wrapped key says so
 * (master-key.ts), until a master key rotation wraps it for the new id.
 */
export default {
  version: 20,
  name: 'bank and document ids in NFC; taken ones under a legacy name',
  sql: `
-- Ids are measured as the API measures them (UTF-16 code units, at most 256).
CREATE OR REPLACE FUNCTION pg_temp.mnemo_utf16_length(s text) RETURNS integer LANGUAGE sql IMMUTABLE AS $f$
  SELECT char_length(s) + char_length(regexp_replace(s, '[^\\U00010000-\\U0010FFFF]', '', 'g'))
$f$;
-- The legacy name of a non-NFC id, with \`hex\` digits of its MD5: never over 256.
CREATE OR REPLACE FUNCTION pg_temp.mnemo_legacy_id(old text, hex integer) RETURNS text LANGUAGE sql IMMUTABLE AS $f$
  SELECT left(normalize(old, NFC), CASE WHEN normalize(old, NFC) ~ '[\\U00010000-\\U0010FFFF]'
                                        THEN (248 - hex) / 2 ELSE 248 - hex END)
         || '~legacy-' || left(md5(old), hex)
$f$;

CREATE TEMP TABLE nfc_banks ON COMMIT DROP AS
WITH bad AS (
  SELECT b.project_id, b.id AS old_id, normalize(b.id, NFC) AS nfc_id,
         EXISTS (SELECT 1 FROM banks t WHERE t.project_id = b.project_id AND t.id = normalize(b.id, NFC)) AS taken,
         row_number() OVER (PARTITION BY b.project_id, normalize(b.id, NFC) ORDER BY b.created_at, b.id COLLATE "C") AS rank
  FROM banks b WHERE NOT (b.id IS NFC NORMALIZED))
SELECT project_id, old_id,
       CASE WHEN NOT taken AND rank = 1 AND pg_temp.mnemo_utf16_length(nfc_id) <= 256 THEN nfc_id
            ELSE pg_temp.mnemo_legacy_id(old_id, 8) END AS new_id
FROM bad;
UPDATE nfc_banks r SET new_id = pg_temp.mnemo_legacy_id(r.old_id, 32)
WHERE EXISTS (SELECT 1 FROM banks b WHERE b.project_id = r.project_id AND b.id = r.new_id)
   OR EXISTS (SELECT 1 FROM nfc_banks o WHERE o.project_id = r.project_id AND o.new_id = r.new_id AND o.old_id <> r.old_id);

-- An encrypted bank's data key was wrapped for its old id: the wrapped key says which.
UPDATE bank_keys k
SET wrapped_key = k.wrapped_key || '.' || translate(encode(convert_to(r.old_id, 'UTF8'), 'base64'), E'+/=\\n', '-_')
FROM nfc_banks r
WHERE k.project_id = r.project_id AND k.bank_id = r.old_id AND k.wrapped_key NOT LIKE '%.%.%';

-- Every table with the bank's data, in one statement: foreign keys are checked at its end.
DO $rename$
DECLARE
  statement text := 'WITH banks_renamed AS (UPDATE banks x SET id = r.new_id FROM nfc_banks r
    WHERE x.project_id = r.project_id AND x.id = r.old_id RETURNING 1)';
  t record;
BEGIN
  FOR t IN
    SELECT c.table_name FROM information_schema.columns c
    JOIN information_schema.tables tb ON tb.table_schema = c.table_schema AND tb.table_name = c.table_name
    WHERE c.table_schema = current_schema() AND c.column_name = 'bank_id' AND tb.table_type = 'BASE TABLE'
      AND c.table_name <> 'banks'
      AND EXISTS (SELECT 1 FROM information_schema.columns p WHERE p.table_schema = c.table_schema
                  AND p.table_name = c.table_name AND p.column_name = 'project_id')
    ORDER BY c.table_name
  LOOP
    statement := statement || format(', %I AS (UPDATE %I x SET bank_id = r.new_id FROM nfc_banks r
      WHERE x.project_id = r.project_id AND x.bank_id = r.old_id RETURNING 1)', 'renamed_' || t.table_name, t.table_name);
  END LOOP;
  EXECUTE statement || ' SELECT 1';
END
$rename$;

INSERT INTO audit (project_id, actor_type, action, bank_id, status, request_id)
SELECT project_id, 'system', 'banks.id_normalized', new_id, 200, 'migration-20:' || old_id FROM nfc_banks;

-- Documents, within each bank (already renamed): the documents table and the memories' column.
CREATE TEMP TABLE nfc_documents ON COMMIT DROP AS
WITH ids AS (
  SELECT project_id, bank_id, id, created_at FROM documents WHERE NOT (id IS NFC NORMALIZED)
  UNION
  SELECT project_id, bank_id, document_id, min(created_at) FROM memories m
  WHERE document_id IS NOT NULL AND NOT (document_id IS NFC NORMALIZED)
    AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.project_id = m.project_id
                    AND d.bank_id = m.bank_id AND d.id = m.document_id)
  GROUP BY project_id, bank_id, document_id),
bad AS (
  SELECT i.project_id, i.bank_id, i.id AS old_id, normalize(i.id, NFC) AS nfc_id,
         EXISTS (SELECT 1 FROM documents d WHERE d.project_id = i.project_id AND d.bank_id = i.bank_id
                 AND d.id = normalize(i.id, NFC))
         OR EXISTS (SELECT 1 FROM memories m WHERE m.project_id = i.project_id AND m.bank_id = i.bank_id
                    AND m.document_id = normalize(i.id, NFC)) AS taken,
         row_number() OVER (PARTITION BY i.project_id, i.bank_id, normalize(i.id, NFC)
                            ORDER BY i.created_at, i.id COLLATE "C") AS rank
  FROM ids i)
SELECT project_id, bank_id, old_id,
       CASE WHEN NOT taken AND rank = 1 AND pg_temp.mnemo_utf16_length(nfc_id) <= 256 THEN nfc_id
            ELSE pg_temp.mnemo_legacy_id(old_id, 8) END AS new_id
FROM bad;
UPDATE nfc_documents r SET new_id = pg_temp.mnemo_legacy_id(r.old_id, 32)
WHERE EXISTS (SELECT 1 FROM documents d WHERE d.project_id = r.project_id AND d.bank_id = r.bank_id AND d.id = r.new_id)
   OR EXISTS (SELECT 1 FROM nfc_documents o WHERE o.project_id = r.project_id AND o.bank_id = r.bank_id
              AND o.new_id = r.new_id AND o.old_id <> r.old_id);
UPDATE documents x SET id = r.new_id FROM nfc_documents r
WHERE x.project_id = r.project_id AND x.bank_id = r.bank_id AND x.id = r.old_id;
UPDATE memories x SET document_id = r.new_id FROM nfc_documents r
WHERE x.project_id = r.project_id AND x.bank_id = r.bank_id AND x.document_id = r.old_id;
INSERT INTO audit (project_id, actor_type, action, bank_id, status, request_id)
SELECT project_id, 'system', 'documents.id_normalized', bank_id, 200, 'migration-20:' || old_id FROM nfc_documents;
`,
} satisfies Migration;
