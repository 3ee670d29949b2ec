import type { Migration } from './migration.js';

export default {
  version: 27,
  name: 'mental models: named source queries kept answered by Reflect, with their history',
  sql: `
-- A mental model: a named query whose Reflect answer is kept (content) and refreshed. Its text
-- (name, query, content, the Reflect answer with its evidence) is the bank's text: sealed in an
-- encrypted bank, which each value's prefix shows, like a directive's. refreshed_generation is
-- the bank's generation the content was computed at: a different current generation means the
-- bank changed since (stale). refresh_requested_at marks a model a queued refresh will take.
CREATE TABLE mental_models (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  id text NOT NULL,
  seq bigserial NOT NULL,
  name text NOT NULL,
  source_query text NOT NULL,
  tags text[] NOT NULL DEFAULT '{}',
  max_tokens integer NOT NULL,
  trigger jsonb NOT NULL DEFAULT '{}',
  content text,
  reflect_response text,
  refreshed_generation bigint,
  last_refreshed_at timestamptz,
  refresh_requested_at timestamptz,
  refresh_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, bank_id, id),
  FOREIGN KEY (project_id, bank_id) REFERENCES banks(project_id, id) ON DELETE CASCADE
);
CREATE INDEX mental_models_bank_seq ON mental_models (project_id, bank_id, seq);

-- Each change of a model's content (a refresh, a clear): what it was before, bounded per model.
CREATE TABLE mental_model_history (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  model_id text NOT NULL,
  seq bigserial NOT NULL,
  previous_content text,
  content text,
  cause text NOT NULL,
  changed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, bank_id, model_id, seq),
  FOREIGN KEY (project_id, bank_id, model_id) REFERENCES mental_models(project_id, bank_id, id) ON DELETE CASCADE
);
`,
} satisfies Migration;
