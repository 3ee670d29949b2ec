import { parseTemporalQuery } from './temporal.js';
import { keywordTerms } from './terms.js';

/**
 * A question about two events at once: their order ("which did I start first, the Ferrari
 * model or the Zero?"), the time between them ("how many days passed between the day I
 * cancelled FarmFresh and the day I shopped on Instacart?"), or one's duration when the other
 * happened ("how long had I been taking guitar lessons when I bought the amp?"). The answer
 * needs the turn that tells of each event; searched as one query, the event with the rarer or
 * more words wins the whole first page and the other's turn falls out of it.
 *
 * Each side is the event's own words ("the Ferrari model"): the question's frame ("which
 * project did I start first") is shared by both and said by many turns, so in a side's search
 * it would let the other event's turns, which say it too, outrank the side's own.
 */
export interface EventPair {
  /** Keyword terms of each side (stemmed, stop words out), each with at least one own term. */
  sides: [string[], string[]];
}

// "…first, A or B?": after a word of order, the two options up to the question's end.
const ORDER =
  /^(.*\b(?:first|earlier|earliest|sooner|later|latest|last|before|after)\b[^,?]*?)(?:,|:)?\s+((?:the|my|a|an)\s+[^?]+?|'[^?]+?|"[^?]+?)\s+or\s+([^?]+?)\s*\??\s*$/i;
// "…between A and B?" (the first "and" after "between": an event is rarely named with one).
const BETWEEN = /^(.*?)\bbetween\s+(.+?)\s+and\s+([^?]+?)\s*\??\s*$/i;
// "…had I been A when B?", "…since A when B?": a span that runs until the second event.
const SPAN_WHEN =
  /^(.*?\b(?:(?:had|have|has)\s+(?:I|we|you|he|she|they)\s+been|since))\s+(.+?)\s+when\s+([^?]+?)\s*\??\s*$/i;

/** A side that is only a date ("August 15, 2023"): a day named in an event ("the Sunday mass") is not. */
function isDate(text: string): boolean {
  const date = parseTemporalQuery(text, new Date(0));
  return date !== null && keywordTerms(text.replace(date.expression, ' ')).length === 0;
}

/** The two events a question relates, or null when it names fewer (most questions). */
export function parseEventPair(query: string): EventPair | null {
  const between = BETWEEN.exec(query);
  const m = ORDER.exec(query) ?? between ?? SPAN_WHEN.exec(query);
  if (!m) return null;
  const a = keywordTerms(m[2]!);
  const b = keywordTerms(m[3]!);
  // "Between John and Tim" relates two people, "between August 11 and 15" is a time range
  // (the query's window): an event takes a phrase, and is not a date.
  if (m === between && [m[2]!, m[3]!].some((s) => keywordTerms(s).length < 2 || isDate(s))) return null;
  // The words both events share ("model" of "the Ferrari model or the Zero model") tell
  // neither apart; two sides with no words of their own are one event asked twice.
  const own = (side: string[], other: string[]) => [...new Set(side.filter((t) => !other.includes(t)))];
  const sides: [string[], string[]] = [own(a, b), own(b, a)];
  return sides[0].length > 0 && sides[1].length > 0 ? { sides } : null;
}
