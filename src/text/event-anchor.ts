import { countOf } from './temporal.js';
import { keywordTerms } from './terms.js';

/**
 * A time named relative to an event instead of a date: "two weeks before the wedding", "the
 * day after my graduation", "a few months after the move". The event's date is not in the
 * query; recall looks the event up among the bank's memories and centres a window on it.
 */
export interface EventAnchor {
  /** Keyword terms of the event ("wedding"). */
  terms: string[];
  /** Signed distance from the event: negative before it. */
  offsetMs: number;
  /** Words the anchor was read from. */
  expression: string;
}

const DAY = 86_400_000;
const UNIT_MS: Record<string, number> = { day: DAY, week: 7 * DAY, month: 30 * DAY, year: 365 * DAY };

const COUNT = String.raw`\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:a\s+)?few|(?:a\s+)?couple(?:\s+of)?|several|the`;
// The event: one to four words after an optional determiner, up to punctuation, the end, or a
// word that starts another clause.
const ANCHOR = new RegExp(
  String.raw`\b(?:(${COUNT})\s+)?(day|week|month|year)s?\s+(before|after|prior\s+to|ahead\s+of|following)\s+` +
    String.raw`(?:(?:the|my|our|his|her|their|your|its)\s+)?([\p{L}\p{N}'\u2019-]+(?:\s+(?!(?:when|where|while|and|or|did|was|were|is|that|to)\b)[\p{L}\p{N}'\u2019-]+){0,3})`,
  'iu',
);

/** The event anchor of a query, or null when it names none (or only stop words as the event). */
export function parseEventAnchor(query: string): EventAnchor | null {
  const m = ANCHOR.exec(query);
  if (!m) return null;
  const [expression, count, unit, direction, event] = m;
  const terms = keywordTerms(event!);
  if (terms.length === 0) return null;
  const n = count?.toLowerCase() === 'the' ? 1 : countOf(count);
  const before = /^(?:before|prior|ahead)/i.test(direction!);
  return { terms, offsetMs: (before ? -1 : 1) * n * UNIT_MS[unit!.toLowerCase()]!, expression: expression! };
}

/**
 * The window an anchor asks about, given the event's time: centred on the event moved by the
 * offset, half as wide as the offset on each side (at least a day), so "two weeks before" is
 * the week around the day two weeks earlier.
 */
export function anchoredWindow(anchor: EventAnchor, eventAt: Date): { start: Date; end: Date } {
  const centre = eventAt.getTime() + anchor.offsetMs;
  const half = Math.max(Math.abs(anchor.offsetMs) / 2, DAY);
  return { start: new Date(centre - half), end: new Date(centre + half) };
}
