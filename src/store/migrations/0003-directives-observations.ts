import type { Migration } from './migration.js';

export default {
  version: 3,
  name: 'directives and observations',
  sql: `
CREATE TABLE directives (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  id uuid NOT NULL,
  name text NOT NULL,
  text text NOT NULL,
  priority integer NOT NULL DEFAULT 0,
  tags text[] NOT NULL DEFAULT '{}',
  active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, bank_id, id),
  FOREIGN KEY (project_id, bank_id) REFERENCES banks(project_id, id) ON DELETE CASCADE
);

-- Observations are memories of type 'observation'; this registry marks the ones consolidation
-- wrote (a client may retain its own 'observation' memories, which consolidation leaves alone).
CREATE TABLE observations (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  id uuid NOT NULL,
  writer text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, bank_id, id),
  FOREIGN KEY (project_id, bank_id, id) REFERENCES memories(project_id, bank_id, id) ON DELETE CASCADE
);

-- The memories behind an observation: 'supports' rows are its proof, 'contradicts' rows its conflicts.
CREATE TABLE observation_sources (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  observation_id uuid NOT NULL,
  memory_id uuid NOT NULL,
  relation text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, bank_id, observation_id, memory_id),
  FOREIGN KEY (project_id, bank_id, observation_id) REFERENCES observations(project_id, bank_id, id) ON DELETE CASCADE,
  FOREIGN KEY (project_id, bank_id, memory_id) REFERENCES memories(project_id, bank_id, id) ON DELETE CASCADE
);
CREATE INDEX observation_sources_memory ON observation_sources (project_id, bank_id, memory_id);

-- How far consolidation got: the highest memory seq it has processed.
CREATE TABLE consolidation_state (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  last_seq bigint NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, bank_id),
  FOREIGN KEY (project_id, bank_id) REFERENCES banks(project_id, id) ON DELETE CASCADE
);
`,
} satisfies Migration;
