import { BM25_TF, keywordSearchFunction, memoryFilter } from './keyword-search.js';
import type { Migration } from './migration.js';

export default {
  version: 13,
  name: 'keyword search: phase 2 looks up only the terms phase 1 did not read in full',
  sql: `
-- Phase 2 rescored each candidate with one subquery over every query term: at 100k memories,
-- 100 candidates times 3-4 terms of index probes, half of the keyword query's time on the
-- embedded engine. A term whose whole posting list phase 1 read has its exact part of the score
-- in s1; the other terms are read for all candidates at once (one index scan per term over the
-- candidates' ids). Same scores, same order.
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
  -- Terms whose every posting phase 1 read have their part of each candidate's score in s1
  -- already; only the others are looked up, all candidates of a term in one index scan.
  rest AS MATERIALIZED (
    SELECT q.term, q.idf FROM q WHERE (SELECT yes FROM capped) OR q.term NOT IN (SELECT d.term FROM drivers d)),
  extra AS MATERIALIZED (
    SELECT t.memory_id AS id,
      sum(r.idf * ${BM25_TF}) AS s2
    FROM rest r
    JOIN memory_terms t ON t.project_id = p_project AND t.bank_id = p_bank AND t.term = r.term
      AND t.memory_id = ANY (ARRAY(SELECT c.id FROM cand c))
    CROSS JOIN stats
    GROUP BY t.memory_id),
  scored AS MATERIALIZED (
    SELECT c.id, CASE WHEN (SELECT yes FROM capped) THEN 0 ELSE c.s1 END + coalesce(e.s2, 0) AS bm25
    FROM cand c LEFT JOIN extra e ON e.id = c.id)
`,
})}`,
} satisfies Migration;
