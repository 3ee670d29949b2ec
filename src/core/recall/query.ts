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
  /** The query asks the assistant for advice ("can you suggest…", "any tips for…"). */
  asksAdvice: boolean;
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

/**
 * Questions about time elapsed or order ("how many days passed between…", "how many weeks ago
 * did I…", "which did I do first…", "the order of…"): the answer is worked out from when things
 * happened, so the memories wanted are the dated ones that tell of the events. Those ask "when".
 * "How many days ago/passed/between" asks nothing else (a memory stating some number is no
 * better); "how many days did it take … after …" may be answered by a stated duration too, so it
 * asks both.
 */
const ASKS_ELAPSED =
  /\bhow many (?:minutes|hours|days|weeks|months|years)\b[^?]*\b(?:ago|passed|elapsed|between|since)\b/i;
const ASKS_DURATION =
  /\bhow many (?:minutes|hours|days|weeks|months|years)\b[^?]*\b(?:when|before|after|until|later|earlier)\b/i;
const ASKS_ORDER =
  /\b(?:which|what|who)\b[^?]*\b(?:first|earlier|earliest|later|latest|last)\b[^?]*\bor\b|\b(?:the|what|in) (?:order|sequence)\b[^?]*\b(?:earliest|latest|first|last)\b/i;

/**
 * A request for advice addressed to the assistant ("can you suggest…", "any ideas for…"). Its
 * request words say what is wanted now, not what to look for: a chat history is full of such
 * requests on every topic, so they match the wrong ones; the memory that helps is the one that
 * tells of the topic (a taste, a situation) in its own words.
 */
const ADVICE_REQUEST =
  /\b(?:can|could|would) you (?:please )?(?:suggest|recommend|give me|share|provide|help|think of)\b|\b(?:any|some) (?:suggestions?|recommendations?|ideas?|tips|advice)\b|\bdo you have any\b/i;
const REQUEST_TERMS = new Set(
  keywordTerms('suggest suggestion recommend recommendation idea tips advice useful help ways'),
);

/** Keyword terms of a query; a request for advice loses its request words (if others remain). */
function queryTerms(query: string, advice: boolean): string[] {
  const terms = keywordTerms(query);
  if (!advice) return terms;
  const topic = terms.filter((t) => !REQUEST_TERMS.has(t));
  return topic.length > 0 ? topic : terms;
}

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

/** Earlier than anything a bank holds: where the parse starts an open range ("before 2020"). */
const OPEN_START = Date.UTC(1900, 0, 1);

/**
 * A parsed range that rules nothing out is no range: "before today" or "until now", asked as of
 * today, holds the whole history, and as a window it would only rank the oldest memories (the
 * nearest its middle) and dilute the reranker.
 */
function informative<T extends { start: Date; end: Date }>(parsed: T | null, reference: Date): T | null {
  if (!parsed) return null;
  const open = parsed.start.getTime() <= OPEN_START;
  return open && parsed.end.getTime() >= Math.floor(reference.getTime() / DAY) * DAY ? null : parsed;
}

/** Parses and embeds a recall query. */
export async function analyzeQuery(
  s: Pick<Services, 'embedder'>,
  query: string,
  reference: Date,
  window: { start: Date; end: Date } | undefined,
): Promise<AnalyzedQuery> {
  const parsed = window
    ? { ...window, absolute: true }
    : informative(parseTemporalQuery(query, reference), reference);
  const [vector] = await s.embedder.embed([query]);
  const elapsed = ASKS_ELAPSED.test(query);
  const advice = ADVICE_REQUEST.test(query);
  return {
    text: query,
    terms: queryTerms(query, advice),
    entityProbes: [...new Set(wordRuns(query))],
    window: parsed ? { start: parsed.start, end: parsed.end } : null,
    windowAbsolute: parsed?.absolute === true,
    anchor: parsed ? null : parseEventAnchor(query),
    asksWhen: ASKS_WHEN.test(query) || elapsed || ASKS_DURATION.test(query) || ASKS_ORDER.test(query),
    asksQuantity:
      !elapsed && ASKS_QUANTITY.test(query) ? (ASKS_MONEY.test(query) ? 'money' : 'number') : null,
    asksAdvice: advice,
    reference,
    vector: vector!,
  };
}
