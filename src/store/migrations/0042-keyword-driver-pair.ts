import { keywordSearchFunction, PAIR_PHASE_ONE, PHASE_TWO } from './keyword-search.js';
import type { Migration } from './migration.js';

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
  ctes: `${PAIR_PHASE_ONE}${PHASE_TWO}`,
})}`,
} satisfies Migration;
