import { BM25_TF, keywordSearchFunction, memoryFilter } from './keyword-search.js';
import type { Migration } from './migration.js';

export default {
  version: 8,
  name: 'keyword search: document length on each posting',
  sql: `
-- Each posting carries its memory's length (memories.term_count), so BM25 is computed from the
-- postings alone: when every query term's postings fit in the driver budget, phase 1 is exact
-- and phase 2 (index probes per candidate and term) is skipped.
ALTER TABLE memory_terms ADD COLUMN dl real;
UPDATE memory_terms t SET dl = m.term_count FROM memories m
  WHERE m.project_id = t.project_id AND m.bank_id = t.bank_id AND m.id = t.memory_id;

${keywordSearchFunction({
  create: 'CREATE OR REPLACE',
  tieBreak: 's.seq',
  ctes: `  cand AS MATERIALIZED (
    SELECT t.memory_id AS id,
      sum(d.idf * ${BM25_TF}) AS s1
    FROM drivers d
    JOIN memory_terms t ON t.project_id = p_project AND t.bank_id = p_bank AND t.term = d.term
    CROSS JOIN stats
    WHERE NOT filtered OR EXISTS (
      ${memoryFilter(6)})
    GROUP BY t.memory_id ORDER BY s1 DESC, t.memory_id LIMIT p_candidates),
  exact AS MATERIALIZED (SELECT (SELECT count(*) FROM drivers) = (SELECT count(*) FROM q) AS yes),
  scored AS MATERIALIZED (
    SELECT m.id, m.seq, CASE WHEN (SELECT yes FROM exact) THEN c.s1 ELSE (
      SELECT sum(q.idf * ${BM25_TF})
      FROM q JOIN memory_terms t ON t.project_id = p_project AND t.bank_id = p_bank AND t.term = q.term AND t.memory_id = m.id
    ) END AS bm25
    FROM cand c
    JOIN memories m ON m.project_id = p_project AND m.bank_id = p_bank AND m.id = c.id
    CROSS JOIN stats)
`,
})}`,
} satisfies Migration;
