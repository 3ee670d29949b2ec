/**
 * Versioned schema migrations, shared by both engines. Append only: a released migration is
 * never edited. Every data table is keyed by project (and bank where it holds bank data) so
 * that it can later be distributed by bank.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: Migration[] = [
  {
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
  },
  {
    version: 2,
    name: 'operations and idempotency',
    sql: `
CREATE TABLE operations (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  id uuid NOT NULL,
  kind text NOT NULL,
  status text NOT NULL DEFAULT 'pending',
  payload jsonb NOT NULL,
  items_count integer NOT NULL DEFAULT 0,
  memories_created integer NOT NULL DEFAULT 0,
  error text,
  attempts integer NOT NULL DEFAULT 0,
  run_after timestamptz NOT NULL DEFAULT now(),
  locked_by text,
  locked_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, bank_id, id),
  FOREIGN KEY (project_id, bank_id) REFERENCES banks(project_id, id) ON DELETE CASCADE
);
CREATE INDEX operations_claimable ON operations (run_after) WHERE status IN ('pending', 'processing');
CREATE INDEX operations_bank ON operations (project_id, bank_id, created_at DESC);

CREATE TABLE idempotency (
  project_id text NOT NULL,
  key text NOT NULL,
  request_hash text NOT NULL,
  status integer NOT NULL DEFAULT 0,
  response jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, key)
);
CREATE INDEX idempotency_age ON idempotency (created_at);
`,
  },
  {
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
  },
  {
    version: 4,
    name: 'rate limit counters',
    sql: `
-- Fixed-window counters shared by every mnemo process on the database: requests per minute
-- (per project, subject '', and per key, subject = key id) and retained items per day.
-- One upsert per request; old windows are pruned.
CREATE TABLE rate_counters (
  project_id text NOT NULL,
  kind text NOT NULL,
  subject text NOT NULL,
  window_start timestamptz NOT NULL,
  count bigint NOT NULL,
  lim bigint,
  PRIMARY KEY (project_id, kind, subject, window_start)
);
CREATE INDEX rate_counters_window ON rate_counters (window_start);
`,
  },
  {
    version: 5,
    name: 'managed encryption',
    sql: `
-- One random data key per encrypted bank, wrapped (AES-256-GCM) by the server master key;
-- never deleted while the bank lives, so a row written in either form stays readable.
-- converting: a background operation is moving the bank's rows to the form its config wants.
CREATE TABLE bank_keys (
  project_id text NOT NULL,
  bank_id text NOT NULL,
  wrapped_key text NOT NULL,
  master_fingerprint text NOT NULL,
  converting boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  rewrapped_at timestamptz,
  PRIMARY KEY (project_id, bank_id),
  FOREIGN KEY (project_id, bank_id) REFERENCES banks(project_id, id) ON DELETE CASCADE
);
-- Which form each row is in, so a conversion knows what is left and can resume.
ALTER TABLE memories ADD COLUMN encrypted boolean NOT NULL DEFAULT false;
ALTER TABLE entities ADD COLUMN encrypted boolean NOT NULL DEFAULT false;
`,
  },
  {
    version: 6,
    name: 'recall indexes',
    sql: `
-- Semantic channel: one partial HNSW index per common vector size (the column is untyped, so
-- each indexes the cast of its rows). Queries use the same expression with
-- hnsw.iterative_scan, so the bank filter does not starve the walk.
CREATE INDEX memories_hnsw_100 ON memories USING hnsw ((embedding::vector(100)) vector_cosine_ops)
  WHERE vector_dims(embedding) = 100;
CREATE INDEX memories_hnsw_256 ON memories USING hnsw ((embedding::vector(256)) vector_cosine_ops)
  WHERE vector_dims(embedding) = 256;
CREATE INDEX memories_hnsw_384 ON memories USING hnsw ((embedding::vector(384)) vector_cosine_ops)
  WHERE vector_dims(embedding) = 384;
CREATE INDEX memories_hnsw_512 ON memories USING hnsw ((embedding::vector(512)) vector_cosine_ops)
  WHERE vector_dims(embedding) = 512;
CREATE INDEX memories_hnsw_768 ON memories USING hnsw ((embedding::vector(768)) vector_cosine_ops)
  WHERE vector_dims(embedding) = 768;
CREATE INDEX memories_hnsw_1024 ON memories USING hnsw ((embedding::vector(1024)) vector_cosine_ops)
  WHERE vector_dims(embedding) = 1024;
CREATE INDEX memories_hnsw_1536 ON memories USING hnsw ((embedding::vector(1536)) vector_cosine_ops)
  WHERE vector_dims(embedding) = 1536;
-- Temporal channel: memories said within a window.
CREATE INDEX memories_bank_mentioned ON memories (project_id, bank_id, mentioned_at);
-- Retain's neighbour context: the latest memories of a conversation (session metadata).
CREATE INDEX memories_session ON memories (project_id, bank_id,
  (coalesce(metadata->>'session_id', metadata->>'session', metadata->>'conversation_id', metadata->>'thread_id')), seq DESC)
  WHERE document_id IS NULL;
-- Graph channel: an entity's memories in a stable order, read as a bounded sample.
CREATE INDEX memory_entities_entity_memory ON memory_entities (project_id, bank_id, entity_id, memory_id);

-- Keyword channel: BM25 over the bank's own term statistics, as a function so that its plan is
-- made once per connection instead of on every query (planning this query costs more than
-- running it on a bank of a few thousand memories). Two phases, so that a common word does not
-- make a query read most of the bank:
-- 1. candidates: the postings of the rarest terms, while their total stays within
--    p_driver_postings (always all of the rarest term's), scored by IDF and saturated tf;
-- 2. the best p_candidates get exact BM25 over every query term, by index probes.
-- Exact BM25 whenever all the query's postings fit in the budget. The score is BM25 divided by
-- the IDF mass of the query terms the bank knows, at most 1; the order is BM25.
-- Filters mirror store/sql/filters.ts; with a filter, phase 1 reads the memories too.
CREATE FUNCTION mnemo_keyword_search(
  p_project text, p_bank text, p_terms text[], p_limit int, p_candidates int, p_driver_postings int,
  p_k1 float8, p_b float8,
  p_types text[], p_tags text[], p_tags_match text, p_document text, p_before timestamptz)
RETURNS TABLE (memory_id uuid, score float8)
LANGUAGE plpgsql STABLE AS $fn$
#variable_conflict use_column
DECLARE
  filtered boolean := p_types IS NOT NULL OR p_tags IS NOT NULL OR p_document IS NOT NULL OR p_before IS NOT NULL;
BEGIN
  RETURN QUERY
  WITH stats AS MATERIALIZED (
    SELECT greatest(b.memory_count, 1)::float8 AS n,
           greatest(b.term_total::float8 / greatest(b.memory_count, 1), 1) AS avgdl
    FROM banks b WHERE b.project_id = p_project AND b.id = p_bank),
  q AS MATERIALIZED (
    SELECT bt.term, bt.df, ln(1 + (stats.n - bt.df + 0.5) / (bt.df + 0.5)) AS idf
    FROM bank_terms bt CROSS JOIN stats
    WHERE bt.project_id = p_project AND bt.bank_id = p_bank AND bt.term = ANY(p_terms) AND bt.df > 0),
  drivers AS MATERIALIZED (
    SELECT x.term, x.idf FROM (
      SELECT q.term, q.idf, sum(q.df) OVER w AS running, row_number() OVER w AS rank
      FROM q WINDOW w AS (ORDER BY q.df, q.term)) x
    WHERE x.rank = 1 OR x.running <= p_driver_postings),
  cand AS MATERIALIZED (
    SELECT t.memory_id AS id, sum(d.idf * t.tf / (t.tf + p_k1)) AS s1
    FROM drivers d
    JOIN memory_terms t ON t.project_id = p_project AND t.bank_id = p_bank AND t.term = d.term
    WHERE NOT filtered OR EXISTS (
      SELECT 1 FROM memories m WHERE m.project_id = p_project AND m.bank_id = p_bank AND m.id = t.memory_id
        AND (p_types IS NULL OR m.type = ANY(p_types))
        AND (p_document IS NULL OR m.document_id = p_document)
        AND (p_before IS NULL OR m.mentioned_at <= p_before)
        AND (p_tags IS NULL OR CASE p_tags_match
          WHEN 'all' THEN m.tags = '{}' OR m.tags @> p_tags
          WHEN 'any_strict' THEN m.tags && p_tags
          WHEN 'all_strict' THEN m.tags @> p_tags
          WHEN 'exact' THEN m.tags @> p_tags AND m.tags <@ p_tags
          ELSE m.tags = '{}' OR m.tags && p_tags END))
    GROUP BY t.memory_id ORDER BY s1 DESC, t.memory_id LIMIT p_candidates),
  scored AS MATERIALIZED (
    SELECT m.id, m.seq, (
      SELECT sum(q.idf * t.tf * (p_k1 + 1) / (t.tf + p_k1 * (1 - p_b + p_b * m.term_count / stats.avgdl)))
      FROM q JOIN memory_terms t ON t.project_id = p_project AND t.bank_id = p_bank AND t.term = q.term AND t.memory_id = m.id
    ) AS bm25
    FROM cand c
    JOIN memories m ON m.project_id = p_project AND m.bank_id = p_bank AND m.id = c.id
    CROSS JOIN stats)
  SELECT s.id, least(1, s.bm25 / (SELECT sum(q.idf) FROM q))::float8
  FROM scored s ORDER BY s.bm25 DESC, s.seq DESC LIMIT p_limit;
END
$fn$;
`,
  },
  {
    version: 7,
    name: 'language model usage per bank',
    sql: `
ALTER TABLE banks ADD COLUMN llm_input_tokens bigint NOT NULL DEFAULT 0;
ALTER TABLE banks ADD COLUMN llm_output_tokens bigint NOT NULL DEFAULT 0;
`,
  },
  {
    version: 8,
    name: 'keyword search: document length on each posting',
    sql: `
-- Each posting carries its memory's length (memories.term_count), so BM25 is computed from the
-- postings alone: when every query term's postings fit in the driver budget, phase 1 is exact
-- and phase 2 (index probes per candidate and term) is skipped.
ALTER TABLE memory_terms ADD COLUMN dl real;
UPDATE memory_terms t SET dl = m.term_count FROM memories m
  WHERE m.project_id = t.project_id AND m.bank_id = t.bank_id AND m.id = t.memory_id;

CREATE OR REPLACE FUNCTION mnemo_keyword_search(
  p_project text, p_bank text, p_terms text[], p_limit int, p_candidates int, p_driver_postings int,
  p_k1 float8, p_b float8,
  p_types text[], p_tags text[], p_tags_match text, p_document text, p_before timestamptz)
RETURNS TABLE (memory_id uuid, score float8)
LANGUAGE plpgsql STABLE AS $fn$
#variable_conflict use_column
DECLARE
  filtered boolean := p_types IS NOT NULL OR p_tags IS NOT NULL OR p_document IS NOT NULL OR p_before IS NOT NULL;
BEGIN
  RETURN QUERY
  WITH stats AS MATERIALIZED (
    SELECT greatest(b.memory_count, 1)::float8 AS n,
           greatest(b.term_total::float8 / greatest(b.memory_count, 1), 1) AS avgdl
    FROM banks b WHERE b.project_id = p_project AND b.id = p_bank),
  q AS MATERIALIZED (
    SELECT bt.term, bt.df, ln(1 + (stats.n - bt.df + 0.5) / (bt.df + 0.5)) AS idf
    FROM bank_terms bt CROSS JOIN stats
    WHERE bt.project_id = p_project AND bt.bank_id = p_bank AND bt.term = ANY(p_terms) AND bt.df > 0),
  drivers AS MATERIALIZED (
    SELECT x.term, x.idf FROM (
      SELECT q.term, q.idf, sum(q.df) OVER w AS running, row_number() OVER w AS rank
      FROM q WINDOW w AS (ORDER BY q.df, q.term)) x
    WHERE x.rank = 1 OR x.running <= p_driver_postings),
  cand AS MATERIALIZED (
    SELECT t.memory_id AS id,
      sum(d.idf * t.tf * (p_k1 + 1) / (t.tf + p_k1 * (1 - p_b + p_b * coalesce(t.dl, stats.avgdl) / stats.avgdl))) AS s1
    FROM drivers d
    JOIN memory_terms t ON t.project_id = p_project AND t.bank_id = p_bank AND t.term = d.term
    CROSS JOIN stats
    WHERE NOT filtered OR EXISTS (
      SELECT 1 FROM memories m WHERE m.project_id = p_project AND m.bank_id = p_bank AND m.id = t.memory_id
        AND (p_types IS NULL OR m.type = ANY(p_types))
        AND (p_document IS NULL OR m.document_id = p_document)
        AND (p_before IS NULL OR m.mentioned_at <= p_before)
        AND (p_tags IS NULL OR CASE p_tags_match
          WHEN 'all' THEN m.tags = '{}' OR m.tags @> p_tags
          WHEN 'any_strict' THEN m.tags && p_tags
          WHEN 'all_strict' THEN m.tags @> p_tags
          WHEN 'exact' THEN m.tags @> p_tags AND m.tags <@ p_tags
          ELSE m.tags = '{}' OR m.tags && p_tags END))
    GROUP BY t.memory_id ORDER BY s1 DESC, t.memory_id LIMIT p_candidates),
  exact AS MATERIALIZED (SELECT (SELECT count(*) FROM drivers) = (SELECT count(*) FROM q) AS yes),
  scored AS MATERIALIZED (
    SELECT m.id, m.seq, CASE WHEN (SELECT yes FROM exact) THEN c.s1 ELSE (
      SELECT sum(q.idf * t.tf * (p_k1 + 1) / (t.tf + p_k1 * (1 - p_b + p_b * coalesce(t.dl, stats.avgdl) / stats.avgdl)))
      FROM q JOIN memory_terms t ON t.project_id = p_project AND t.bank_id = p_bank AND t.term = q.term AND t.memory_id = m.id
    ) END AS bm25
    FROM cand c
    JOIN memories m ON m.project_id = p_project AND m.bank_id = p_bank AND m.id = c.id
    CROSS JOIN stats)
  SELECT s.id, least(1, s.bm25 / (SELECT sum(q.idf) FROM q))::float8
  FROM scored s ORDER BY s.bm25 DESC, s.seq DESC LIMIT p_limit;
END
$fn$;
`,
  },
  {
    version: 9,
    name: 'temporal search: index of long occurred spans',
    sql: `
-- Temporal recall finds occurred ranges by their start when they span at most 31 days
-- (search.ts LONG_SPAN); the longer ones ("last year", "in the 90s") are few and found here.
CREATE INDEX memories_long_spans ON memories (project_id, bank_id, occurred_start)
  WHERE occurred_end - occurred_start > interval '31 days';
`,
  },
  {
    version: 10,
    name: 'bank generation',
    sql: `
-- Bumped by every write that can change what Recall returns from the bank (its memories, their
-- entities and embeddings, its config, its space), in the transaction of the write: a cached
-- Recall answer is valid while the generation it was computed at is current.
ALTER TABLE banks ADD COLUMN generation bigint NOT NULL DEFAULT 0;
`,
  },
  {
    version: 11,
    name: 'keyword search: postings read from the index alone',
    sql: `
-- The primary key of memory_terms carries each posting's tf and document length, so the keyword
-- search reads postings by an index-only scan instead of one heap page per posting (on the
-- embedded engine, 22k postings of a common term: 260 ms -> 20 ms). Index-only scans need the
-- visibility map, which VACUUM keeps: autovacuum on PostgreSQL, maintainStatistics on PGlite.
CREATE UNIQUE INDEX memory_terms_covering ON memory_terms (project_id, bank_id, term, memory_id) INCLUDE (tf, dl);
ALTER TABLE memory_terms DROP CONSTRAINT memory_terms_pkey;
ALTER TABLE memory_terms ADD CONSTRAINT memory_terms_pkey PRIMARY KEY USING INDEX memory_terms_covering;
`,
  },
  {
    version: 12,
    name: 'keyword search: impact-ordered postings for queries of common words',
    sql: `
-- A query whose every word is common (each in more memories than the driver budget) used to
-- score all postings of its rarest word: 20k+ rows in a 100k bank. Now each query term gives its
-- highest-impact postings (most occurrences, then shortest memory: the two things BM25 rewards
-- in a term's score), the driver budget shared among the terms, read in order from this index;
-- a memory in several terms' lists sums their scores, and phase 2 rescores the candidates
-- exactly as before. Queries with a rare term are unchanged.
-- Phase 2 no longer reads the memories: each posting carries its document length, and equal
-- scores are ordered by id (they were ordered newest first, at one index probe per candidate).
CREATE INDEX memory_terms_impact ON memory_terms (project_id, bank_id, term, tf DESC, dl, memory_id);

CREATE OR REPLACE FUNCTION mnemo_keyword_search(
  p_project text, p_bank text, p_terms text[], p_limit int, p_candidates int, p_driver_postings int,
  p_k1 float8, p_b float8,
  p_types text[], p_tags text[], p_tags_match text, p_document text, p_before timestamptz)
RETURNS TABLE (memory_id uuid, score float8)
LANGUAGE plpgsql STABLE AS $fn$
#variable_conflict use_column
DECLARE
  filtered boolean := p_types IS NOT NULL OR p_tags IS NOT NULL OR p_document IS NOT NULL OR p_before IS NOT NULL;
BEGIN
  RETURN QUERY
  WITH stats AS MATERIALIZED (
    SELECT greatest(b.memory_count, 1)::float8 AS n,
           greatest(b.term_total::float8 / greatest(b.memory_count, 1), 1) AS avgdl
    FROM banks b WHERE b.project_id = p_project AND b.id = p_bank),
  q AS MATERIALIZED (
    SELECT bt.term, bt.df, ln(1 + (stats.n - bt.df + 0.5) / (bt.df + 0.5)) AS idf
    FROM bank_terms bt CROSS JOIN stats
    WHERE bt.project_id = p_project AND bt.bank_id = p_bank AND bt.term = ANY(p_terms) AND bt.df > 0),
  drivers AS MATERIALIZED (
    SELECT x.term, x.idf FROM (
      SELECT q.term, q.idf, sum(q.df) OVER w AS running, row_number() OVER w AS rank
      FROM q WINDOW w AS (ORDER BY q.df, q.term)) x
    WHERE x.rank = 1 OR x.running <= p_driver_postings),
  capped AS MATERIALIZED (SELECT coalesce(min(q.df), 0) > p_driver_postings AS yes FROM q),
  -- The terms whose postings phase 1 reads, and how many of each (NULL: all).
  readers AS MATERIALIZED (
    SELECT d.term, d.idf, NULL::bigint AS n FROM drivers d WHERE NOT (SELECT yes FROM capped)
    UNION ALL
    SELECT q.term, q.idf, greatest(p_driver_postings / (SELECT count(*) FROM q), 1) FROM q WHERE (SELECT yes FROM capped)),
  cand AS MATERIALIZED (
    SELECT t.memory_id AS id,
      sum(r.idf * t.tf * (p_k1 + 1) / (t.tf + p_k1 * (1 - p_b + p_b * coalesce(t.dl, stats.avgdl) / stats.avgdl))) AS s1
    FROM readers r
    CROSS JOIN LATERAL (
      SELECT t.memory_id, t.tf, t.dl FROM memory_terms t
      WHERE t.project_id = p_project AND t.bank_id = p_bank AND t.term = r.term
        AND (NOT filtered OR EXISTS (
          SELECT 1 FROM memories m WHERE m.project_id = p_project AND m.bank_id = p_bank AND m.id = t.memory_id
            AND (p_types IS NULL OR m.type = ANY(p_types))
            AND (p_document IS NULL OR m.document_id = p_document)
            AND (p_before IS NULL OR m.mentioned_at <= p_before)
            AND (p_tags IS NULL OR CASE p_tags_match
              WHEN 'all' THEN m.tags = '{}' OR m.tags @> p_tags
              WHEN 'any_strict' THEN m.tags && p_tags
              WHEN 'all_strict' THEN m.tags @> p_tags
              WHEN 'exact' THEN m.tags @> p_tags AND m.tags <@ p_tags
              ELSE m.tags = '{}' OR m.tags && p_tags END)))
      ORDER BY t.tf DESC, t.dl, t.memory_id LIMIT r.n) t
    CROSS JOIN stats
    GROUP BY t.memory_id ORDER BY s1 DESC, t.memory_id LIMIT p_candidates),
  exact AS MATERIALIZED (SELECT NOT (SELECT yes FROM capped) AND (SELECT count(*) FROM drivers) = (SELECT count(*) FROM q) AS yes),
  scored AS MATERIALIZED (
    SELECT c.id, CASE WHEN (SELECT yes FROM exact) THEN c.s1 ELSE (
      SELECT sum(q.idf * t.tf * (p_k1 + 1) / (t.tf + p_k1 * (1 - p_b + p_b * coalesce(t.dl, stats.avgdl) / stats.avgdl)))
      FROM q JOIN memory_terms t ON t.project_id = p_project AND t.bank_id = p_bank AND t.term = q.term AND t.memory_id = c.id
    ) END AS bm25
    FROM cand c CROSS JOIN stats)
  SELECT s.id, least(1, s.bm25 / (SELECT sum(q.idf) FROM q))::float8
  FROM scored s ORDER BY s.bm25 DESC, s.id DESC LIMIT p_limit;
END
$fn$;
`,
  },
  {
    version: 13,
    name: 'keyword search: phase 2 looks up only the terms phase 1 did not read in full',
    sql: `
-- Phase 2 rescored each candidate with one subquery over every query term: at 100k memories,
-- 100 candidates times 3-4 terms of index probes, half of the keyword query's time on the
-- embedded engine. A term whose whole posting list phase 1 read has its exact part of the score
-- in s1; the other terms are read for all candidates at once (one index scan per term over the
-- candidates' ids). Same scores, same order.
CREATE OR REPLACE FUNCTION mnemo_keyword_search(
  p_project text, p_bank text, p_terms text[], p_limit int, p_candidates int, p_driver_postings int,
  p_k1 float8, p_b float8,
  p_types text[], p_tags text[], p_tags_match text, p_document text, p_before timestamptz)
RETURNS TABLE (memory_id uuid, score float8)
LANGUAGE plpgsql STABLE AS $fn$
#variable_conflict use_column
DECLARE
  filtered boolean := p_types IS NOT NULL OR p_tags IS NOT NULL OR p_document IS NOT NULL OR p_before IS NOT NULL;
BEGIN
  RETURN QUERY
  WITH stats AS MATERIALIZED (
    SELECT greatest(b.memory_count, 1)::float8 AS n,
           greatest(b.term_total::float8 / greatest(b.memory_count, 1), 1) AS avgdl
    FROM banks b WHERE b.project_id = p_project AND b.id = p_bank),
  q AS MATERIALIZED (
    SELECT bt.term, bt.df, ln(1 + (stats.n - bt.df + 0.5) / (bt.df + 0.5)) AS idf
    FROM bank_terms bt CROSS JOIN stats
    WHERE bt.project_id = p_project AND bt.bank_id = p_bank AND bt.term = ANY(p_terms) AND bt.df > 0),
  drivers AS MATERIALIZED (
    SELECT x.term, x.idf FROM (
      SELECT q.term, q.idf, sum(q.df) OVER w AS running, row_number() OVER w AS rank
      FROM q WINDOW w AS (ORDER BY q.df, q.term)) x
    WHERE x.rank = 1 OR x.running <= p_driver_postings),
  capped AS MATERIALIZED (SELECT coalesce(min(q.df), 0) > p_driver_postings AS yes FROM q),
  -- The terms whose postings phase 1 reads, and how many of each (NULL: all).
  readers AS MATERIALIZED (
    SELECT d.term, d.idf, NULL::bigint AS n FROM drivers d WHERE NOT (SELECT yes FROM capped)
    UNION ALL
    SELECT q.term, q.idf, greatest(p_driver_postings / (SELECT count(*) FROM q), 1) FROM q WHERE (SELECT yes FROM capped)),
  cand AS MATERIALIZED (
    SELECT t.memory_id AS id,
      sum(r.idf * t.tf * (p_k1 + 1) / (t.tf + p_k1 * (1 - p_b + p_b * coalesce(t.dl, stats.avgdl) / stats.avgdl))) AS s1
    FROM readers r
    CROSS JOIN LATERAL (
      SELECT t.memory_id, t.tf, t.dl FROM memory_terms t
      WHERE t.project_id = p_project AND t.bank_id = p_bank AND t.term = r.term
        AND (NOT filtered OR EXISTS (
          SELECT 1 FROM memories m WHERE m.project_id = p_project AND m.bank_id = p_bank AND m.id = t.memory_id
            AND (p_types IS NULL OR m.type = ANY(p_types))
            AND (p_document IS NULL OR m.document_id = p_document)
            AND (p_before IS NULL OR m.mentioned_at <= p_before)
            AND (p_tags IS NULL OR CASE p_tags_match
              WHEN 'all' THEN m.tags = '{}' OR m.tags @> p_tags
              WHEN 'any_strict' THEN m.tags && p_tags
              WHEN 'all_strict' THEN m.tags @> p_tags
              WHEN 'exact' THEN m.tags @> p_tags AND m.tags <@ p_tags
              ELSE m.tags = '{}' OR m.tags && p_tags END)))
      ORDER BY t.tf DESC, t.dl, t.memory_id LIMIT r.n) t
    CROSS JOIN stats
    GROUP BY t.memory_id ORDER BY s1 DESC, t.memory_id LIMIT p_candidates),
  -- Terms whose every posting phase 1 read have their part of each candidate's score in s1
  -- already; only the others are looked up, all candidates of a term in one index scan.
  rest AS MATERIALIZED (
    SELECT q.term, q.idf FROM q WHERE (SELECT yes FROM capped) OR q.term NOT IN (SELECT d.term FROM drivers d)),
  extra AS MATERIALIZED (
    SELECT t.memory_id AS id,
      sum(r.idf * t.tf * (p_k1 + 1) / (t.tf + p_k1 * (1 - p_b + p_b * coalesce(t.dl, stats.avgdl) / stats.avgdl))) AS s2
    FROM rest r
    JOIN memory_terms t ON t.project_id = p_project AND t.bank_id = p_bank AND t.term = r.term
      AND t.memory_id = ANY (ARRAY(SELECT c.id FROM cand c))
    CROSS JOIN stats
    GROUP BY t.memory_id),
  scored AS MATERIALIZED (
    SELECT c.id, CASE WHEN (SELECT yes FROM capped) THEN 0 ELSE c.s1 END + coalesce(e.s2, 0) AS bm25
    FROM cand c LEFT JOIN extra e ON e.id = c.id)
  SELECT s.id, least(1, s.bm25 / (SELECT sum(q.idf) FROM q))::float8
  FROM scored s ORDER BY s.bm25 DESC, s.id DESC LIMIT p_limit;
END
$fn$;
`,
  },
  {
    version: 14,
    name: 'idempotency keys per caller; replies of encrypted banks sealed; secrets withheld',
    sql: `
-- Keys were per project: any caller of the project could replay another's answer (a minted key,
-- a Retain made with a scope the replayer lacks). Now a key belongs to one caller of one
-- project. Old rows are 24-hour caches and are dropped.
DROP TABLE IF EXISTS idempotency;
CREATE TABLE idempotency (
  project_id text NOT NULL,
  caller text NOT NULL,
  key text NOT NULL,
  request_hash text NOT NULL,
  status integer NOT NULL DEFAULT 0,
  -- The answer; for an encrypted bank a JSON string sealed with its data key; for an answer that
  -- carried a secret (withheld) only its id.
  response jsonb,
  withheld boolean NOT NULL DEFAULT false,
  encrypted boolean NOT NULL DEFAULT false,
  bank_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, caller, key)
);
CREATE INDEX idempotency_age ON idempotency (created_at);
CREATE INDEX idempotency_bank ON idempotency (project_id, bank_id) WHERE bank_id IS NOT NULL;
`,
  },
  {
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
  },
  {
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
  },
  {
    version: 18,
    name: 'fair operation claims',
    sql: `
-- Where a sliced operation (consolidation, re-embed, re-encryption, a big async Retain) got to:
-- the next claim goes on from there.
ALTER TABLE operations ADD COLUMN progress jsonb;
-- When a project ('' bank) and each of its banks last had an operation claimed: the next claim
-- goes to the project, then the bank, that waited longest, so one tenant's backlog cannot starve
-- another's work.
CREATE TABLE operation_turns (
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  bank_id text NOT NULL,
  claimed_at timestamptz NOT NULL,
  PRIMARY KEY (project_id, bank_id)
);
-- Banks with work, found by skipping through this index, and a bank's next operation.
CREATE INDEX operations_fair ON operations (project_id, bank_id, run_after, created_at)
  WHERE status IN ('pending', 'processing');
`,
  },
  {
    version: 19,
    name: 'audit: unauthenticated refusals beyond a per-minute number are counted in one row',
    sql: `
-- An unauthenticated flood wrote one audit row per request. Refusals are counted per project
-- and minute (shared by every process on the database); past the first ones, a minute's
-- refusals add to one aggregate audit row whose count says how many it stands for.
CREATE TABLE audit_refusals (
  project_id text NOT NULL,
  minute timestamptz NOT NULL,
  refused integer NOT NULL,
  PRIMARY KEY (project_id, minute)
);
ALTER TABLE audit ADD COLUMN count integer;
CREATE UNIQUE INDEX audit_aggregate ON audit (project_id, request_id) WHERE count IS NOT NULL;
`,
  },
];
