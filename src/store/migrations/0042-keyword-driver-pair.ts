import {
  BM25_TF,
  keywordSearchFunction,
  memoryFilter,
  PHASE_TWO,
  readersCtes,
  summedCandidates,
} from './keyword-search.js';
import type { Migration } from './migration.js';

/** Every posting of pair driver `term` (a column of CTE `pair`) passing the filter, scored with its IDF `idf`: (id, s). */
const posting = (term: string, idf: string) => `SELECT t.memory_id AS id, p.${idf} * ${BM25_TF} AS s
      FROM pair p CROSS JOIN stats JOIN memory_terms t ON t.project_id = p_project AND t.bank_id = p_bank AND t.term = p.${term}
      WHERE p.yes AND (NOT filtered OR EXISTS (
        ${memoryFilter(8)}))`;

export default {
  version: 42,
  name: 'keyword search: one or two drivers joined on the memory instead of summed per memory',
  sql: `
-- Phase 1 read the postings of the query's rarest words (the drivers) and summed them per memory
-- in an aggregate: ~1,800 postings for a 12-word question over a 10k bank, most of the keyword
-- function's time. When it reads one or two words in full (the usual shape once a bank is past
-- a few thousand memories), their two posting lists are now joined on the memory instead: the
-- same sums (a + b either way), the same candidates in the same order, for less. Three or more
-- drivers, and queries of only common words, are summed as before.
${keywordSearchFunction({
  create: 'CREATE OR REPLACE',
  tieBreak: 's.id',
  driverColumns: 'x.term, x.idf, x.rank',
  ctes: `  -- One or two drivers read in full: phase 1 is a full join of their posting lists.
  pair AS MATERIALIZED (
    SELECT NOT (SELECT coalesce(min(q.df), 0) > p_driver_postings FROM q) AND count(*) <= 2 AS yes,
      max(d.term) FILTER (WHERE d.rank = 1) AS t1, max(d.idf) FILTER (WHERE d.rank = 1) AS i1,
      max(d.term) FILTER (WHERE d.rank = 2) AS t2, max(d.idf) FILTER (WHERE d.rank = 2) AS i2
    FROM drivers d),
${readersCtes(' AND NOT (SELECT yes FROM pair)')}  cand AS MATERIALIZED ((
    SELECT coalesce(a.id, b.id) AS id, coalesce(a.s, 0) + coalesce(b.s, 0) AS s1
    FROM (${posting('t1', 'i1')}) a
    FULL JOIN (${posting('t2', 'i2')}) b ON b.id = a.id
    ORDER BY s1 DESC, id LIMIT p_candidates)
    UNION ALL (
    ${summedCandidates('filtered')})),
${PHASE_TWO}`,
})}`,
} satisfies Migration;
