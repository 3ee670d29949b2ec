import type { Migration } from './migration.js';

export default {
  version: 46,
  name: 'bank counters: valid memories, entities and documents',
  sql: `
-- A listing's total of the valid memories (Hindsight's default), and the bank profile's entity
-- and document counts, were counted over the bank on each request. The bank row keeps them,
-- beside memory_count. Statement-level triggers over transition tables keep them in the very
-- statement that changes the rows, whatever the writer (Retain, curation, forgetting, imports,
-- consolidation, re-encryption, a bank's deletion): one set-based update of the bank row each.
-- document_count is what the profile counted: the distinct document ids of the bank's memories.
-- Whether a document id is new or gone is read from the memories, so two writers of one bank
-- must take turns (every writer of memories holds the bank's row lock to its commit).
ALTER TABLE banks ADD COLUMN valid_count integer NOT NULL DEFAULT 0,
  ADD COLUMN entity_count integer NOT NULL DEFAULT 0,
  ADD COLUMN document_count integer NOT NULL DEFAULT 0;

CREATE FUNCTION mnemo_memories_inserted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  UPDATE banks b SET valid_count = b.valid_count + x.valid, document_count = b.document_count + x.docs
  FROM (
    SELECT n.project_id, n.bank_id, count(*) FILTER (WHERE n.state = 'valid')::int AS valid,
      (SELECT count(*)::int FROM (SELECT DISTINCT d.document_id FROM mnemo_new_memories d
         WHERE d.project_id = n.project_id AND d.bank_id = n.bank_id AND d.document_id IS NOT NULL) d
       WHERE NOT EXISTS (SELECT 1 FROM memories m
         WHERE m.project_id = n.project_id AND m.bank_id = n.bank_id AND m.document_id = d.document_id
           AND m.id NOT IN (SELECT o.id FROM mnemo_new_memories o
             WHERE o.project_id = n.project_id AND o.bank_id = n.bank_id))) AS docs
    FROM mnemo_new_memories n GROUP BY n.project_id, n.bank_id) x
  WHERE b.project_id = x.project_id AND b.id = x.bank_id AND (x.valid <> 0 OR x.docs <> 0);
  RETURN NULL;
END
$fn$;

CREATE FUNCTION mnemo_memories_deleted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  UPDATE banks b SET valid_count = b.valid_count - x.valid, document_count = b.document_count - x.docs
  FROM (
    SELECT o.project_id, o.bank_id, count(*) FILTER (WHERE o.state = 'valid')::int AS valid,
      (SELECT count(*)::int FROM (SELECT DISTINCT d.document_id FROM mnemo_old_memories d
         WHERE d.project_id = o.project_id AND d.bank_id = o.bank_id AND d.document_id IS NOT NULL) d
       WHERE NOT EXISTS (SELECT 1 FROM memories m
         WHERE m.project_id = o.project_id AND m.bank_id = o.bank_id AND m.document_id = d.document_id)) AS docs
    FROM mnemo_old_memories o GROUP BY o.project_id, o.bank_id) x
  WHERE b.project_id = x.project_id AND b.id = x.bank_id AND (x.valid <> 0 OR x.docs <> 0);
  RETURN NULL;
END
$fn$;

-- An update that moves a memory between states (curation) or, in general, between documents or
-- banks, row by row (a trigger with transition tables cannot name columns, and would copy every
-- row of every other update, a re-embedding's vectors included): the valid counts move by
-- arithmetic; a changed document id or bank (no writer does it today) has its banks' document
-- counts counted again.
CREATE FUNCTION mnemo_memory_updated() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  UPDATE banks SET valid_count = valid_count - 1
  WHERE OLD.state = 'valid' AND project_id = OLD.project_id AND id = OLD.bank_id;
  UPDATE banks SET valid_count = valid_count + 1
  WHERE NEW.state = 'valid' AND project_id = NEW.project_id AND id = NEW.bank_id;
  IF (OLD.document_id, OLD.bank_id, OLD.project_id) IS DISTINCT FROM (NEW.document_id, NEW.bank_id, NEW.project_id) THEN
    UPDATE banks b SET document_count = (SELECT count(DISTINCT m.document_id) FROM memories m
      WHERE m.project_id = b.project_id AND m.bank_id = b.id AND m.document_id IS NOT NULL)
    WHERE (b.project_id = OLD.project_id AND b.id = OLD.bank_id)
       OR (b.project_id = NEW.project_id AND b.id = NEW.bank_id);
  END IF;
  RETURN NULL;
END
$fn$;

CREATE FUNCTION mnemo_entities_counted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE banks b SET entity_count = b.entity_count + x.n
    FROM (SELECT project_id, bank_id, count(*)::int AS n FROM mnemo_new_entities GROUP BY project_id, bank_id) x
    WHERE b.project_id = x.project_id AND b.id = x.bank_id;
  ELSE
    UPDATE banks b SET entity_count = b.entity_count - x.n
    FROM (SELECT project_id, bank_id, count(*)::int AS n FROM mnemo_old_entities GROUP BY project_id, bank_id) x
    WHERE b.project_id = x.project_id AND b.id = x.bank_id;
  END IF;
  RETURN NULL;
END
$fn$;

CREATE TRIGGER memories_counted_inserted AFTER INSERT ON memories
  REFERENCING NEW TABLE AS mnemo_new_memories
  FOR EACH STATEMENT EXECUTE FUNCTION mnemo_memories_inserted();
CREATE TRIGGER memories_counted_deleted AFTER DELETE ON memories
  REFERENCING OLD TABLE AS mnemo_old_memories
  FOR EACH STATEMENT EXECUTE FUNCTION mnemo_memories_deleted();
CREATE TRIGGER memories_counted_updated AFTER UPDATE OF state, document_id, bank_id, project_id ON memories
  FOR EACH ROW WHEN ((OLD.state, OLD.document_id, OLD.bank_id, OLD.project_id)
    IS DISTINCT FROM (NEW.state, NEW.document_id, NEW.bank_id, NEW.project_id))
  EXECUTE FUNCTION mnemo_memory_updated();
CREATE TRIGGER entities_counted_inserted AFTER INSERT ON entities
  REFERENCING NEW TABLE AS mnemo_new_entities
  FOR EACH STATEMENT EXECUTE FUNCTION mnemo_entities_counted();
CREATE TRIGGER entities_counted_deleted AFTER DELETE ON entities
  REFERENCING OLD TABLE AS mnemo_old_entities
  FOR EACH STATEMENT EXECUTE FUNCTION mnemo_entities_counted();

UPDATE banks b SET
  valid_count = (SELECT count(*) FROM memories m
    WHERE m.project_id = b.project_id AND m.bank_id = b.id AND m.state = 'valid'),
  entity_count = (SELECT count(*) FROM entities e WHERE e.project_id = b.project_id AND e.bank_id = b.id),
  document_count = (SELECT count(DISTINCT m.document_id) FROM memories m
    WHERE m.project_id = b.project_id AND m.bank_id = b.id AND m.document_id IS NOT NULL);
`,
} satisfies Migration;
