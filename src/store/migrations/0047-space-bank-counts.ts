import type { Migration } from './migration.js';

export default {
  version: 47,
  name: "spaces: each space's bank count kept as a counter",
  sql: `
-- A space's bank_count was counted from its banks at every read of the space, and a listing of
-- spaces counted every bank of the project in one statement (issue 18). Kept here instead, in
-- the statement that adds, removes or moves a bank.
ALTER TABLE spaces ADD COLUMN bank_count integer NOT NULL DEFAULT 0;
UPDATE spaces s SET bank_count = c.n
  FROM (SELECT project_id, space_id, count(*)::int AS n FROM banks
         WHERE space_id IS NOT NULL GROUP BY project_id, space_id) c
 WHERE s.project_id = c.project_id AND s.id = c.space_id;

CREATE FUNCTION mnemo_space_bank_count() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP <> 'INSERT' AND OLD.space_id IS NOT NULL THEN
    UPDATE spaces SET bank_count = bank_count - 1 WHERE project_id = OLD.project_id AND id = OLD.space_id;
  END IF;
  IF TG_OP <> 'DELETE' AND NEW.space_id IS NOT NULL THEN
    UPDATE spaces SET bank_count = bank_count + 1 WHERE project_id = NEW.project_id AND id = NEW.space_id;
  END IF;
  RETURN NULL;
END
$fn$;

CREATE TRIGGER banks_space_added AFTER INSERT ON banks
  FOR EACH ROW WHEN (NEW.space_id IS NOT NULL) EXECUTE FUNCTION mnemo_space_bank_count();
CREATE TRIGGER banks_space_removed AFTER DELETE ON banks
  FOR EACH ROW WHEN (OLD.space_id IS NOT NULL) EXECUTE FUNCTION mnemo_space_bank_count();
CREATE TRIGGER banks_space_moved AFTER UPDATE OF space_id ON banks
  FOR EACH ROW WHEN (OLD.space_id IS DISTINCT FROM NEW.space_id) EXECUTE FUNCTION mnemo_space_bank_count();
`,
} satisfies Migration;
