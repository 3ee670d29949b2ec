import {
  GENERIC_PLAN,
  keywordSearchFunction,
  PAIR_PHASE_ONE_LENGTHS,
  phaseTwoBounded,
} from './keyword-search.js';
import type { Migration } from './migration.js';

export default {
  version: 54,
  name: 'keyword search: phase 2 reads a short candidate postings in one index scan, a long one by probes',
  sql: `
-- Phase 2 probed the key once per candidate and word (migration 52): ~400 index descents for a
-- 12-word question, ~1.9 ms of the function's ~3.3 ms over a 10k bank. A short candidate (its
-- length dl, which phase 1 now keeps from the postings it read, at most 6 per word to score less
-- 10, and at most 64) has its postings read whole instead, one descent of memory_terms_memory,
-- joined with the words; a longer one (a document's chunk, or few words to score) still probes per
-- word, so no candidate costs more than the larger of the bound and its words. Both ways sum a
-- candidate's words in the same order: the scores are the same floats as migration 53's.
${keywordSearchFunction({
  create: 'CREATE OR REPLACE',
  tieBreak: 's.id',
  driverColumns: 'x.term, x.idf, x.rank',
  settings: GENERIC_PLAN,
  ctes: `${PAIR_PHASE_ONE_LENGTHS}${phaseTwoBounded(64)}`,
})}`,
} satisfies Migration;
