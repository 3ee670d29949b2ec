import type { Migration } from './migration.js';

export default {
  version: 36,
  name: 'queued payloads over 256 KB kept in parts',
  sql: `
-- A queued operation's payload (an async Retain's body, up to 10 MB of JSON) was written in one
-- statement, parsed into jsonb and compressed there: on the embedded engine, which runs every
-- statement in the thread that serves requests, 26 ms of CPU for 1.1 MB in memory and 52 ms in a
-- data directory, growing with the body. A payload larger than a part is written as consecutive
-- pieces of its JSON text, one statement each, in the transaction that queues the operation;
-- the operation's payload column then holds a stub naming how many (chr(1) || 'parts').
CREATE TABLE operation_payload_parts (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  operation_id uuid NOT NULL,
  part integer NOT NULL,
  text text NOT NULL,
  PRIMARY KEY (project_id, bank_id, operation_id, part),
  FOREIGN KEY (project_id, bank_id, operation_id) REFERENCES operations(project_id, bank_id, id) ON DELETE CASCADE
);

-- The parts belong to the stub: whatever replaces it (a forget emptying finished payloads, an
-- encryption switch writing a small payload back) takes them with it.
CREATE FUNCTION mnemo_payload_parts_replaced() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  DELETE FROM operation_payload_parts
  WHERE project_id = OLD.project_id AND bank_id = OLD.bank_id AND operation_id = OLD.id;
  RETURN NULL;
END
$fn$;

CREATE TRIGGER operations_payload_replaced AFTER UPDATE OF payload ON operations
  FOR EACH ROW WHEN (OLD.payload ? (chr(1) || 'parts') AND NOT NEW.payload ? (chr(1) || 'parts'))
  EXECUTE FUNCTION mnemo_payload_parts_replaced();
`,
} satisfies Migration;
