import { keywordSearchFunction, memoryFilter } from './keyword-search.js';
import type { Migration } from './migration.js';

export default {
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
${keywordSearchFunction({
  create: 'CREATE',
  tieBreak: 's.seq',
  ctes: `  cand AS MATERIALIZED (
    SELECT t.memory_id AS id, sum(d.idf * t.tf / (t.tf + p_k1)) AS s1
    FROM drivers d
    JOIN memory_terms t ON t.project_id = p_project AND t.bank_id = p_bank AND t.term = d.term
    WHERE NOT filtered OR EXISTS (
      ${memoryFilter(6)})
    GROUP BY t.memory_id ORDER BY s1 DESC, t.memory_id LIMIT p_candidates),
  scored AS MATERIALIZED (
    SELECT m.id, m.seq, (
      SELECT sum(q.idf * t.tf * (p_k1 + 1) / (t.tf + p_k1 * (1 - p_b + p_b * m.term_count / stats.avgdl)))
      FROM q JOIN memory_terms t ON t.project_id = p_project AND t.bank_id = p_bank AND t.term = q.term AND t.memory_id = m.id
    ) AS bm25
    FROM cand c
    JOIN memories m ON m.project_id = p_project AND m.bank_id = p_bank AND m.id = c.id
    CROSS JOIN stats)
`,
})}`,
} satisfies Migration;
