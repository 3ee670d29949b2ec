import { type EventAnchor, parseEventAnchor } from '../../text/event-anchor.js';
import { parseTemporalQuery } from '../../text/temporal.js';
import { keywordTerms } from '../../text/terms.js';
import type { Services } from '../services.js';

/** What recall reads from a query once, for every bank it searches. */
export interface AnalyzedQuery {
  text: string;
  /** Keyword terms (stemmed, stop words out). */
  terms: string[];
  /**
   * Strings that may name a known entity: every run of one to three words, lower case
   * ("caroline", "new york"). Names are found by looking these up among the bank's entities
   * and speakers, not by parsing the query: cheaper, and blind to neither lower case nor
   * unusual names.
   */
  entityProbes: string[];
  /** The time range asked about: `temporal_window` if given, else parsed; null if none. */
  window: { start: Date; end: Date } | null;
  /**
   * The window is precise: given as `temporal_window`, or a calendar date the query names (a
   * year, a day of a month) rather than one relative to the reference ("last week", "in March").
   */
  windowAbsolute: boolean;
  /** With no date in the query, a time relative to an event ("two weeks before the wedding"). */
  anchor: EventAnchor | null;
  /** The query asks for a time ("when", "what year", "how long ago"). */
  asksWhen: boolean;
  /** The query asks for an amount of money, another quantity ("how many", "in total"), or neither. */
  asksQuantity: 'money' | 'number' | null;
  /** The instant relative dates and recency are measured from. */
  reference: Date;
  vector: Float32Array;
}

const DAY = 86_400_000;

/**
 * The latest `mentioned_at` a Recall as of `queryTimestamp` sees: the end of that UTC day. A
 * question asked on a day is about that day's conversations too, and a conversation log's day
 * is more reliable than its clock time (time zones, sessions stamped after the fact): on the
 * LongMemEval development split a third of the turns that answer temporal questions were said
 * hours after the question's timestamp, the same day.
 */
export function asOf(queryTimestamp: Date | undefined): Date | undefined {
  if (!queryTimestamp) return undefined;
  return new Date(Math.floor(queryTimestamp.getTime() / DAY) * DAY + DAY - 1);
}

/** Questions whose answer is a time: the memory that says when is the one wanted. */
const ASKS_WHEN =
  /^\s*(?:when\b|since when\b|what (?:year|month|day|date|time)\b|which (?:year|month|day|date)\b|how long (?:ago|has|have|had|did|was|were)\b|at what (?:age|time)\b)/i;

/**
 * Questions whose answer is a quantity: a memory that states one (a count, a duration, a price)
 * is likelier to answer than one that only names the topic. "How much did I spend" wants an
 * amount of money, not any number.
 */
const ASKS_QUANTITY =
  /\b(?:how (?:many|much|long|old|far|often)|what (?:percentage|percent|amount|number)|total|in all|combined)\b/i;
const ASKS_MONEY = /\b(?:money|spen[dt]|spending|costs?|price|paid|pay|budget|dollars?)\b|\$/i;

const WORD = /[\p{L}\p{N}][\p{L}\p{N}'\u2019.-]*/gu;

/** Every run of one to three words, lower case, possessives dropped ("caroline's" -> "caroline"). */
function wordRuns(text: string): string[] {
  const words = [...text.toLowerCase().matchAll(WORD)].map((m) =>
    m[0].replace(/['\u2019]s$/, '').replace(/[.]+$/, ''),
  );
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    for (let n = 1; n <= 3 && i + n <= words.length; n++) out.push(words.slice(i, i + n).join(' '));
  }
  return out;
}

/** Parses and embeds a recall query. */
export async function analyzeQuery(
  s: Services,
  query: string,
  reference: Date,
  window: { start: Date; end: Date } | undefined,
): Promise<AnalyzedQuery> {
  const parsed = window ? { ...window, absolute: true } : parseTemporalQuery(query, reference);
  const [vector] = await s.embedder.embed([query]);
  return {
    text: query,
    terms: keywordTerms(query),
    entityProbes: [...new Set(wordRuns(query))],
    window: parsed ? { start: parsed.start, end: parsed.end } : null,
    windowAbsolute: parsed?.absolute === true,
    anchor: parsed ? null : parseEventAnchor(query),
    asksWhen: ASKS_WHEN.test(query),
    asksQuantity: ASKS_QUANTITY.test(query) ? (ASKS_MONEY.test(query) ? 'money' : 'number') : null,
    reference,
    vector: vector!,
  };
}
