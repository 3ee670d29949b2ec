import { keywordSearchFunction, PAIR_PHASE_ONE, PHASE_TWO_PROBES } from './keyword-search.js';
import type { Migration } from './migration.js';

export default {
  version: 52,
  name: 'keyword search: phase 2 probes the key per candidate and word instead of reading posting lists',
  sql: `
-- Phase 2 scores the candidates (100) by the query's words phase 1 did not read in full. It
-- looked their postings up with "memory_id = ANY (candidates)" per word, meant as one scan of the
-- key over the candidates' ids; but PostgreSQL read the word's whole posting list through the
-- impact index and tested each posting against the 100 ids: ~5,000 postings for a 12-word
-- question over a 10k bank, and more as the bank grows; ~40% of the keyword function's CPU. Each candidate now looks each such word up by the whole primary key (LIMIT 1 keeps the
-- lookup a nested loop, whatever the planner estimates): at most candidates times words index
-- probes, whatever the bank's size. Each candidate sums its words in the same order (the order
-- of "rest"), so equal scores stay equal. Phase 1 is migration 42's.
${keywordSearchFunction({
  create: 'CREATE OR REPLACE',
  tieBreak: 's.id',
  driverColumns: 'x.term, x.idf, x.rank',
  ctes: `${PAIR_PHASE_ONE}${PHASE_TWO_PROBES}`,
})}`,
} satisfies Migration;
