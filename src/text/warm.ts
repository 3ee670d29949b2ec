import { extractEntities } from './entities.js';
import { findDates, parseTemporalQuery } from './temporal.js';
import { countTokens } from './tokens.js';

/**
 * Runs each text analysis once on a few sentences, so that their one-time costs are paid here
 * and not by the first requests: chrono-node compiles its patterns as each first meets a text
 * they could match (two sentences took 200–330 ms between them on a busy machine), compromise
 * builds its lexicon (~70 ms), the tokenizer its tables. A server calls it before it listens.
 */
export function warmTextAnalysis(): void {
  const reference = new Date(Date.UTC(2024, 4, 1));
  for (const text of [
    'We met last Tuesday, on May 3rd 2024 at 5pm, and again two weeks later.',
    'Alice Smith moved to Lisbon in June and has worked at Google since 2019.',
    'Every Sunday morning Bob goes hiking; yesterday he said tomorrow would rain.',
  ]) {
    findDates(text, reference);
    extractEntities(text);
    countTokens(text);
  }
  parseTemporalQuery('what did I do last week, and in March?', reference);
}
