import { BM25_TF, keywordSearchFunction, readersCtes, summedCandidates } from './keyword-search.js';
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
  ctes: `${readersCtes()}  cand AS MATERIALIZED (
    ${summedCandidates('filtered')}),
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
