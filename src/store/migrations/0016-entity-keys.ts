import type { Migration } from './migration.js';

export default {
  version: 16,
  name: 'entity resolution keys: indexed alias and first/last word lookup',
  sql: `
-- Entity resolution looked candidates up with a scan of the bank's entities comparing each row
-- with every new name (alias arrays, first and last words): quadratic in a large Retain. These
-- keys index what it matches on: 'a:' + a lower-cased alias, 'w:' + the first and the last
-- word of the name key. Statement-level triggers keep them in step with every writer of
-- entities (Retain's upserts, alias learning, re-encryption), one set-based insert each.
CREATE TABLE entity_keys (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  key text NOT NULL,
  entity_id uuid NOT NULL,
  PRIMARY KEY (project_id, bank_id, key, entity_id),
  FOREIGN KEY (project_id, bank_id, entity_id) REFERENCES entities(project_id, bank_id, id) ON DELETE CASCADE
);
CREATE INDEX entity_keys_entity ON entity_keys (project_id, bank_id, entity_id);

CREATE FUNCTION mnemo_entity_key_set(p_name_key text, p_aliases text[]) RETURNS SETOF text
LANGUAGE sql IMMUTABLE AS $fn$
  SELECT 'w:' || split_part(p_name_key, ' ', 1)
  UNION SELECT 'w:' || regexp_replace(p_name_key, '^.* ', '')
  UNION SELECT 'a:' || lower(a) FROM unnest(p_aliases) AS a
$fn$;

CREATE FUNCTION mnemo_entity_keys_inserted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO entity_keys (project_id, bank_id, key, entity_id)
  SELECT n.project_id, n.bank_id, k.key, n.id FROM mnemo_new_entities n
  CROSS JOIN LATERAL mnemo_entity_key_set(n.name_key, n.aliases) AS k(key)
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$fn$;

CREATE FUNCTION mnemo_entity_keys_updated() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  DELETE FROM entity_keys k USING mnemo_old_entities o JOIN mnemo_new_entities n
    ON n.project_id = o.project_id AND n.bank_id = o.bank_id AND n.id = o.id
  WHERE (o.name_key, o.aliases) IS DISTINCT FROM (n.name_key, n.aliases)
    AND k.project_id = o.project_id AND k.bank_id = o.bank_id AND k.entity_id = o.id;
  INSERT INTO entity_keys (project_id, bank_id, key, entity_id)
  SELECT n.project_id, n.bank_id, k.key, n.id FROM mnemo_old_entities o JOIN mnemo_new_entities n
    ON n.project_id = o.project_id AND n.bank_id = o.bank_id AND n.id = o.id
  CROSS JOIN LATERAL mnemo_entity_key_set(n.name_key, n.aliases) AS k(key)
  WHERE (o.name_key, o.aliases) IS DISTINCT FROM (n.name_key, n.aliases)
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$fn$;

CREATE TRIGGER entities_keys_inserted AFTER INSERT ON entities
  REFERENCING NEW TABLE AS mnemo_new_entities
  FOR EACH STATEMENT EXECUTE FUNCTION mnemo_entity_keys_inserted();
CREATE TRIGGER entities_keys_updated AFTER UPDATE ON entities
  REFERENCING OLD TABLE AS mnemo_old_entities NEW TABLE AS mnemo_new_entities
  FOR EACH STATEMENT EXECUTE FUNCTION mnemo_entity_keys_updated();

INSERT INTO entity_keys (project_id, bank_id, key, entity_id)
SELECT e.project_id, e.bank_id, k.key, e.id FROM entities e
CROSS JOIN LATERAL mnemo_entity_key_set(e.name_key, e.aliases) AS k(key)
ON CONFLICT DO NOTHING;
`,
} satisfies Migration;
