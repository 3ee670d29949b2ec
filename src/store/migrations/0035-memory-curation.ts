import type { Migration } from './migration.js';

export default {
  version: 35,
  name: 'memory curation: an invalidated state, edits, and their history',
  sql: `
-- A memory's curation state (Hindsight's PATCH .../memories/{id}): an invalidated memory is kept,
-- listed and restorable, but Recall, Reflect and consolidation leave it out. edited_at: when a
-- client last changed its text or fields. revision counts curation changes: an edit built from
-- one revision is written only over that revision (no lost update between two PATCHes).
ALTER TABLE memories
  ADD COLUMN state text NOT NULL DEFAULT 'valid' CHECK (state IN ('valid', 'invalidated')),
  ADD COLUMN invalidation_reason text,
  ADD COLUMN edited_at timestamptz,
  ADD COLUMN revision integer NOT NULL DEFAULT 0;

-- What curation did to a memory, for its history: invalidated, restored, edited (which fields).
-- No text: an edit's earlier text is not kept (a forget must leave none behind).
CREATE TABLE memory_curation (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  memory_id uuid NOT NULL,
  at timestamptz NOT NULL,
  event text NOT NULL,
  fields text[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (project_id, bank_id, memory_id, at, event),
  FOREIGN KEY (project_id, bank_id, memory_id) REFERENCES memories(project_id, bank_id, id) ON DELETE CASCADE
);
`,
} satisfies Migration;
