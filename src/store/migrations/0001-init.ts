import type { Migration } from './migration.js';

export default {
  version: 1,
  name: 'init',
  sql: `
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE settings (
  key text PRIMARY KEY,
  value text NOT NULL
);

CREATE TABLE projects (
  id text PRIMARY KEY,
  name text NOT NULL,
  limits jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO projects (id, name) VALUES ('default', 'Default project');

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name text NOT NULL,
  scopes text[] NOT NULL,
  secret_hash text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  revoked_at timestamptz,
  last_used_at timestamptz
);
CREATE INDEX api_keys_project ON api_keys (project_id);

CREATE TABLE spaces (
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  id text NOT NULL,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, id)
);

CREATE TABLE banks (
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  id text NOT NULL,
  space_id text,
  is_org_bank boolean NOT NULL DEFAULT false,
  name text,
  mission text,
  config jsonb NOT NULL DEFAULT '{}',
  embedder text,
  memory_count integer NOT NULL DEFAULT 0,
  term_total bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, id)
);
CREATE INDEX banks_space ON banks (project_id, space_id);

CREATE TABLE documents (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  id text NOT NULL,
  content_hash text NOT NULL,
  memory_count integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, bank_id, id),
  FOREIGN KEY (project_id, bank_id) REFERENCES banks(project_id, id) ON DELETE CASCADE
);

CREATE TABLE memories (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  id uuid NOT NULL,
  seq bigserial NOT NULL,
  type text NOT NULL,
  text text NOT NULL,
  context text,
  occurred_start timestamptz,
  occurred_end timestamptz,
  mentioned_at timestamptz,
  tags text[] NOT NULL DEFAULT '{}',
  metadata jsonb NOT NULL DEFAULT '{}',
  document_id text,
  chunk_id text,
  content_hash text NOT NULL,
  term_count integer NOT NULL DEFAULT 0,
  embedding vector,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, bank_id, id),
  FOREIGN KEY (project_id, bank_id) REFERENCES banks(project_id, id) ON DELETE CASCADE
);
CREATE INDEX memories_bank_seq ON memories (project_id, bank_id, seq DESC);
CREATE INDEX memories_bank_document ON memories (project_id, bank_id, document_id) WHERE document_id IS NOT NULL;
CREATE INDEX memories_bank_time ON memories (project_id, bank_id, occurred_start);
CREATE INDEX memories_tags ON memories USING gin (tags);

CREATE TABLE memory_terms (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  term text NOT NULL,
  memory_id uuid NOT NULL,
  tf real NOT NULL,
  PRIMARY KEY (project_id, bank_id, term, memory_id),
  FOREIGN KEY (project_id, bank_id, memory_id) REFERENCES memories(project_id, bank_id, id) ON DELETE CASCADE
);
CREATE INDEX memory_terms_memory ON memory_terms (project_id, bank_id, memory_id);

CREATE TABLE bank_terms (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  term text NOT NULL,
  df integer NOT NULL,
  PRIMARY KEY (project_id, bank_id, term),
  FOREIGN KEY (project_id, bank_id) REFERENCES banks(project_id, id) ON DELETE CASCADE
);

CREATE TABLE entities (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  id uuid NOT NULL,
  name text NOT NULL,
  name_key text NOT NULL,
  type text NOT NULL,
  aliases text[] NOT NULL DEFAULT '{}',
  mention_count integer NOT NULL DEFAULT 0,
  first_seen timestamptz NOT NULL DEFAULT now(),
  last_seen timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, bank_id, id),
  UNIQUE (project_id, bank_id, name_key),
  FOREIGN KEY (project_id, bank_id) REFERENCES banks(project_id, id) ON DELETE CASCADE
);

CREATE TABLE memory_entities (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  memory_id uuid NOT NULL,
  entity_id uuid NOT NULL,
  PRIMARY KEY (project_id, bank_id, memory_id, entity_id),
  FOREIGN KEY (project_id, bank_id, memory_id) REFERENCES memories(project_id, bank_id, id) ON DELETE CASCADE,
  FOREIGN KEY (project_id, bank_id, entity_id) REFERENCES entities(project_id, bank_id, id) ON DELETE CASCADE
);
CREATE INDEX memory_entities_entity ON memory_entities (project_id, bank_id, entity_id);

CREATE TABLE audit (
  project_id text NOT NULL,
  id bigserial NOT NULL,
  at timestamptz NOT NULL DEFAULT now(),
  actor_type text NOT NULL,
  key_id text,
  action text NOT NULL,
  bank_id text,
  space_id text,
  status integer NOT NULL,
  request_id text NOT NULL,
  PRIMARY KEY (project_id, id)
);
CREATE INDEX audit_bank ON audit (project_id, bank_id, id DESC);
`,
} satisfies Migration;
