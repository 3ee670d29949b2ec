import { keywordSearchFunction, PHASE_TWO, readersCtes, summedCandidates } from './keyword-search.js';
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
  ctes: `${readersCtes()}  cand AS MATERIALIZED (
    ${summedCandidates('filtered')}),
${PHASE_TWO}`,
})}`,
} satisfies Migration;
