import { BM25_TF, keywordSearchFunction, memoryFilter } from './keyword-search.js';
import type { Migration } from './migration.js';

export default {
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

${keywordSearchFunction({
  create: 'CREATE OR REPLACE',
  tieBreak: 's.id',
  ctes: `  capped AS MATERIALIZED (SELECT coalesce(min(q.df), 0) > p_driver_postings AS yes FROM q),
  -- The terms whose postings phase 1 reads, and how many of each (NULL: all).
  readers AS MATERIALIZED (
    SELECT d.term, d.idf, NULL::bigint AS n FROM drivers d WHERE NOT (SELECT yes FROM capped)
    UNION ALL
    SELECT q.term, q.idf, greatest(p_driver_postings / (SELECT count(*) FROM q), 1) FROM q WHERE (SELECT yes FROM capped)),
  cand AS MATERIALIZED (
    SELECT t.memory_id AS id,
      sum(r.idf * ${BM25_TF}) AS s1
    FROM readers r
    CROSS JOIN LATERAL (
      SELECT t.memory_id, t.tf, t.dl FROM memory_terms t
      WHERE t.project_id = p_project AND t.bank_id = p_bank AND t.term = r.term
        AND (NOT filtered OR EXISTS (
          ${memoryFilter(10)}))
      ORDER BY t.tf DESC, t.dl, t.memory_id LIMIT r.n) t
    CROSS JOIN stats
    GROUP BY t.memory_id ORDER BY s1 DESC, t.memory_id LIMIT p_candidates),
  exact AS MATERIALIZED (SELECT NOT (SELECT yes FROM capped) AND (SELECT count(*) FROM drivers) = (SELECT count(*) FROM q) AS yes),
  scored AS MATERIALIZED (
    SELECT c.id, CASE WHEN (SELECT yes FROM exact) THEN c.s1 ELSE (
      SELECT sum(q.idf * ${BM25_TF})
      FROM q JOIN memory_terms t ON t.project_id = p_project AND t.bank_id = p_bank AND t.term = q.term AND t.memory_id = c.id
    ) END AS bm25
    FROM cand c CROSS JOIN stats)
`,
})}`,
} satisfies Migration;
