/**
 * Temporal expressions in queries ("what did I do last June?") and in memory content
 * ("yesterday I went to the park"), resolved against a reference instant to UTC ranges
 * [start, end). Built on chrono-node's casual English parser, with the pieces chrono lacks
 * or gets wrong for memory added here:
 *
 * - granularity: chrono returns an instant; "last week" becomes the whole ISO week
 *   (Monday to Monday), "May 2023" the month, "last year" the year, "yesterday" the day;
 * - past bias: with no year given, chrono picks the nearest occurrence, so "in June" asked in
 *   March meant next June. Memories are mostly about the past, so a bare month, date or
 *   weekday resolves to its latest occurrence not after the reference, unless the sentence
 *   speaks of the future ("will", "going to", "next", ...). "last June" is always the latest
 *   June that has ended, "next June" the first one that has not begun;
 * - seasons (northern hemisphere, meteorological: spring is March to May, summer June to
 *   August, autumn September to November, winter December to February; "winter 2023" is
 *   December 2022 to February 2023), decades ("the 90s"), bare years ("in 2022"), parts of
 *   years ("early 2022"), year ranges ("2019-2021"), rolling windows ("the past few weeks"),
 *   a few fixed holidays and Thanksgiving (US);
 * - open ranges: "since X" runs to the end of the reference day, "before X" starts at
 *   1900-01-01;
 * - anchoring on events: "two weeks before the wedding" has no date to anchor on, so it is
 *   dropped here (chrono would read it as two weeks before the reference); `parseEventAnchor`
 *   (event-anchor.ts) reads it, and recall finds the wedding in memory first. "Recently" and
 *   "now" are not dates either.
 */
import * as chrono from 'chrono-node';

/** A date mention in a text, as a UTC range [start, end) and the words that expressed it. */
export interface DateMention {
  start: Date;
  end: Date;
  text: string;
}

/** The time range a query asks about, and the expression it was read from. */
export interface TemporalQuery {
  start: Date;
  end: Date;
  expression: string;
  /**
   * Every date of the expression is a calendar date the query names (a year, or a day of a
   * month: "in 2022", "on 9 November"), none read relative to the reference ("last week", "in
   * March", "two days ago"), which people use loosely.
   */
  absolute: boolean;
}

const DAY = 86_400_000;
/** Start of an open range ("before 2020"): earlier than anything a memory bank holds. */
const OPEN_START = Date.UTC(1900, 0, 1);

type Unit = 'day' | 'week' | 'weekend' | 'month' | 'year';
type Span = [start: number, end: number];
/** Which occurrence of a recurring period ("June", "summer", "Friday") is meant. */
type Pick = 'last' | 'next' | 'this' | 'past' | 'future';

interface Mention {
  index: number;
  /** Exclusive end offset of the expression in the text. */
  stop: number;
  start: number;
  end: number;
  /** Two mentions joined into a range ("from May to July"): no "since"/"before" widening. */
  merged?: boolean;
  /** Names a year or a day of a month, rather than a time relative to the reference. */
  absolute?: boolean;
}

function dayStart(ms: number): number {
  return Math.floor(ms / DAY) * DAY;
}

/** Monday 00:00 UTC of the ISO week containing the day starting at `day`. */
function weekStart(day: number): number {
  return day - ((new Date(day).getUTCDay() + 6) % 7) * DAY;
}

function spanOf(unit: Unit, y: number, m0: number, d: number): Span {
  const s = Date.UTC(y, m0, d);
  switch (unit) {
    case 'year':
      return [Date.UTC(y, 0, 1), Date.UTC(y + 1, 0, 1)];
    case 'month':
      return [Date.UTC(y, m0, 1), Date.UTC(y, m0 + 1, 1)];
    case 'day':
      return [s, s + DAY];
    case 'week':
      return [weekStart(s), weekStart(s) + 7 * DAY];
    case 'weekend': {
      const dow = new Date(s).getUTCDay();
      const saturday = dow === 0 ? s - DAY : s + (6 - dow) * DAY;
      return [saturday, saturday + 2 * DAY];
    }
  }
}

/** Chooses among the yearly occurrences of a period, relative to the reference instant. */
function pickYearly(spanForYear: (year: number) => Span, ref: number, pick: Pick): Span {
  const y = new Date(ref).getUTCFullYear();
  const spans = [y - 2, y - 1, y, y + 1, y + 2].map(spanForYear);
  const containing = spans.find(([s, e]) => s <= ref && ref < e);
  const lastEnded = spans.findLast(([, e]) => e <= ref)!;
  const firstAhead = spans.find(([s]) => s > ref)!;
  switch (pick) {
    case 'last':
      return lastEnded;
    case 'next':
      return firstAhead;
    case 'past':
      return containing ?? lastEnded;
    case 'future':
      return containing ?? firstAhead;
    case 'this':
      return containing ?? (ref - lastEnded[1] <= firstAhead[0] - ref ? lastEnded : firstAhead);
  }
}

function pickFor(modifier: string | undefined, future: boolean): Pick {
  switch (modifier?.toLowerCase()) {
    case 'last':
    case 'past':
    case 'previous':
      return 'last';
    case 'next':
    case 'coming':
      return 'next';
    case 'this':
      return 'this';
    default:
      return future ? 'future' : 'past';
  }
}

const FUTURE =
  /\b(?:will|shall|gonna|going to|plan(?:s|ning|ned)? (?:to|on)|\w+['\u2019]ll|tomorrow|next|upcoming|soon|looking forward|can['\u2019]?t wait)\b/i;

/** Does the sentence around `index` speak of the future? */
function futureAt(text: string, index: number): boolean {
  let from = index;
  while (from > 0 && !/[.!?\n]/.test(text[from - 1]!)) from--;
  let to = index;
  while (to < text.length && !/[.!?\n]/.test(text[to]!)) to++;
  return FUTURE.test(text.slice(from, to));
}

const NUMBER_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  couple: 2,
  few: 3,
  several: 4,
};

export function countOf(word: string | undefined): number {
  if (!word) return 1;
  const w = word.toLowerCase().replace(/\s+/g, ' ').replace(/^an? /, '').replace(/ of$/, '');
  return /^\d+$/.test(w) ? Number(w) : (NUMBER_WORDS[w] ?? 1);
}

const SEASON_MONTH: Record<string, number> = { spring: 2, summer: 5, autumn: 8, fall: 8, winter: 11 };

/** Season of the given year; winter belongs to the year its January falls in. */
function seasonSpan(season: string, year: number): Span {
  const m0 = SEASON_MONTH[season]!;
  const y = m0 === 11 ? year - 1 : year;
  return [Date.UTC(y, m0, 1), Date.UTC(y, m0 + 3, 1)];
}

function thanksgiving(year: number): number {
  const nov1 = new Date(Date.UTC(year, 10, 1)).getUTCDay();
  return Date.UTC(year, 10, 1 + ((4 - nov1 + 7) % 7) + 21);
}

/** Holiday name (normalised) -> the day it falls on in a given year. */
function holidayDay(name: string, year: number): number {
  const n = name.toLowerCase().replace(/['\u2019]/g, '');
  if (n.startsWith('christmas eve')) return Date.UTC(year, 11, 24);
  if (n.startsWith('christmas') || n === 'xmas') return Date.UTC(year, 11, 25);
  if (n.endsWith('eve')) return Date.UTC(year, 11, 31); // new year's eve
  if (n.startsWith('new year')) return Date.UTC(year, 0, 1);
  if (n === 'halloween') return Date.UTC(year, 9, 31);
  if (n.startsWith('valentine')) return Date.UTC(year, 1, 14);
  if (n === 'thanksgiving') return thanksgiving(year);
  return Date.UTC(year, 6, 4); // independence day
}

const YEAR = String.raw`(?:19|20)\d{2}`;
const MODIFIER = '(last|this|next|past|previous|coming)';

/** Recognisers run before chrono, for what it does not parse or parses too narrowly. */
const ROLLING =
  /\b(?:the\s+)?(past|last|previous)\s+(?:(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:a\s+)?few|(?:a\s+)?couple(?:\s+of)?|several)\s+)?(days?|weeks?|months?|years?)\b/gi;
const WEEK_OFFSET: Record<string, number> = {
  this: 0,
  last: -1,
  previous: -1,
  next: 1,
  coming: 1,
  'before last': -2,
  'after next': 2,
};
const WEEK = /\b(?:(this|last|next|previous|coming)\s+week|the\s+week\s+(before\s+last|after\s+next))\b/gi;
const SEASON = new RegExp(
  String.raw`\b(?:${MODIFIER}\s+)?(spring|summer|autumn|fall|winter)(?:\s+(?:of\s+)?(${YEAR}))?\b`,
  'gi',
);
// Without a modifier or a year, a season needs a preposition: "in the fall", not "I fall".
const SEASON_CONTEXT =
  /\b(?:in|during|over|through|throughout|since|until|till|by|before|after|for)\s+(?:the\s+)?$/i;
const DECADE = /\bthe\s+((?:19|20)\d0|['\u2019]?\d0)['\u2019]?s\b/gi;
const YEAR_RANGE = new RegExp(
  String.raw`\b(?:(from|between)\s+)?(${YEAR})\s*(-|\u2013|\u2014|to|until|till|through|and)\s*(${YEAR})\b`,
  'gi',
);
const PART_OF_YEAR = new RegExp(
  String.raw`\b(early|mid|late|(?:the\s+)?(?:beginning|start|middle|end)\s+of)[\s-]+(${YEAR})\b`,
  'gi',
);
const HOLIDAY = new RegExp(
  String.raw`\b(?:${MODIFIER}\s+)?(christmas\s+eve|christmas(?:\s+day)?|xmas|new\s+year(?:['\u2019]?s)\s+(?:eve|day)|new\s+year['\u2019]?s|halloween|valentine['\u2019]?s(?:\s+day)?|thanksgiving|independence\s+day)(?:\s+(${YEAR}))?\b`,
  'gi',
);
// chrono keeps a lone "May" only after "in" ("May I ask"), losing "last May", "since May".
// The lookbehind's spaces are bounded: unbounded, it rescanned a long run of spaces at every
// position inside it (quadratic).
const LONE_MAY = new RegExp(
  String.raw`(?:\b${MODIFIER}\s+|(?<=\b(?:since|from|between|until|till|before|after|during|by|early|late|mid)\s{1,16}))\bmay\b(?!\s+(?:i|we|you|he|she|it|they|be|have|not|\d))`,
  'gi',
);
// chrono reads the reference's hour in the host time zone here, so it is done in UTC instead.
const LAST_NIGHT = /\blast\s+night\b/gi;
const BARE_YEAR = new RegExp(String.raw`\b${YEAR}\b`, 'g');
// A four-digit number followed by a unit is a quantity, not a year.
const QUANTITY_AFTER =
  /^\s*(?:%|percent|[.,:/-]\d|people|persons|dollars|euros|pounds|bucks|usd|eur|gbp|km|kms|kilomet|miles?\b|met(?:er|re)s|feet|ft\b|steps|calories|kcal|words|points|pages|times|followers|likes|views|copies|units|hours|minutes|seconds|lbs|kg|k\b)/i;

function addCustom(text: string, ref: number, out: Mention[]): void {
  const today = dayStart(ref);
  const add = (index: number, stop: number, [start, end]: Span, absolute = false): void => {
    if (out.some((m) => index < m.stop && m.index < stop)) return;
    out.push({ index, stop, start, end, absolute });
  };

  for (const m of text.matchAll(LAST_NIGHT)) add(m.index, m.index + m[0].length, [today - DAY, today]);

  for (const m of text.matchAll(LONE_MAY)) {
    const pick = pickFor(m[1], futureAt(text, m.index));
    add(
      m.index,
      m.index + m[0].length,
      pickYearly((y) => spanOf('month', y, 4, 1), ref, pick),
    );
  }

  for (const m of text.matchAll(ROLLING)) {
    const [, kind, count, unitWord] = m;
    // "last week" alone is the calendar week (below); "the past week", "last 3 days" roll.
    if (kind!.toLowerCase() !== 'past' && count === undefined) continue;
    const n = countOf(count);
    const unit = unitWord!.toLowerCase().replace(/s$/, '');
    const d = new Date(today);
    const start =
      unit === 'day'
        ? today - n * DAY
        : unit === 'week'
          ? today - 7 * n * DAY
          : Date.UTC(
              d.getUTCFullYear() - (unit === 'year' ? n : 0),
              d.getUTCMonth() - (unit === 'month' ? n : 0),
              d.getUTCDate(),
            );
    add(m.index, m.index + m[0].length, [start, today + DAY]);
  }

  for (const m of text.matchAll(WEEK)) {
    const which = (m[1] ?? m[2]!).toLowerCase();
    const offset = WEEK_OFFSET[which.replace(/\s+/g, ' ')] ?? 0;
    const monday = weekStart(today);
    add(m.index, m.index + m[0].length, [monday + offset * 7 * DAY, monday + (offset + 1) * 7 * DAY]);
  }

  for (const m of text.matchAll(SEASON)) {
    const [, modifier, seasonWord, year] = m;
    const season = seasonWord!.toLowerCase();
    if (!modifier && !year && !SEASON_CONTEXT.test(text.slice(Math.max(0, m.index - 24), m.index))) continue;
    const span = year
      ? seasonSpan(season, Number(year))
      : pickYearly((y) => seasonSpan(season, y), ref, pickFor(modifier, futureAt(text, m.index)));
    add(m.index, m.index + m[0].length, span, year !== undefined);
  }

  for (const m of text.matchAll(DECADE)) {
    const digits = m[1]!.replace(/\D/g, '');
    const start =
      digits.length === 4 ? Number(digits) : Number(digits) + (Number(digits) >= 30 ? 1900 : 2000);
    add(m.index, m.index + m[0].length, [Date.UTC(start, 0, 1), Date.UTC(start + 10, 0, 1)], true);
  }

  for (const m of text.matchAll(YEAR_RANGE)) {
    const [, lead, from, connector, to] = m;
    if (connector!.toLowerCase() === 'and' && lead?.toLowerCase() !== 'between') continue;
    if (Number(to) < Number(from)) continue;
    add(m.index, m.index + m[0].length, [Date.UTC(Number(from), 0, 1), Date.UTC(Number(to) + 1, 0, 1)], true);
  }

  for (const m of text.matchAll(PART_OF_YEAR)) {
    const part = m[1]!.toLowerCase();
    const y = Number(m[2]);
    // Thirds of the year: early = January-April, mid = May-August, late = September-December.
    const third = /early|beginning|start/.test(part) ? 0 : /mid|middle/.test(part) ? 1 : 2;
    add(m.index, m.index + m[0].length, [Date.UTC(y, third * 4, 1), Date.UTC(y, third * 4 + 4, 1)], true);
  }

  for (const m of text.matchAll(HOLIDAY)) {
    const [, modifier, name, year] = m;
    const daySpan = (y: number): Span => {
      const s = holidayDay(name!.replace(/\s+/g, ' '), y);
      return [s, s + DAY];
    };
    const span = year
      ? daySpan(Number(year))
      : pickYearly(daySpan, ref, pickFor(modifier, futureAt(text, m.index)));
    add(m.index, m.index + m[0].length, span, year !== undefined);
  }
}

const EVENT_ANCHORED = /\b(?:before|after|later|earlier|prior)$/i;
const WEEKDAY_THEN_ANCHOR = /^\s+(?:before|after)\b/i;
const UNIT_IN_TEXT: [RegExp, Unit][] = [
  [/\bweekends?\b/i, 'weekend'],
  [/\bweeks?\b/i, 'week'],
  [/\bmonths?\b/i, 'month'],
  [/\byears?\b/i, 'year'],
];
// Words chrono reads as dates that are usually something else: "I sat down", "the sun",
// "we will march on", "May I ask". Weekday abbreviations count only with "on" ("on Sat"),
// which chrono then includes in the result; the two months need a preposition before them.
const ABBREVIATED_DAY = /^(?:sat|sun|mon|tue|tues|wed|thu|thur|thurs|fri)$/i;
const AMBIGUOUS_MONTH = /^(?:may|march)$/i;
const DATE_PREPOSITION =
  /\b(?:in|on|of|from|between|since|until|till|by|before|after|during|early|late|mid|every|last|this|next|past|previous|coming)\s+$/i;
const MONTH_MODIFIER = new RegExp(String.raw`\b${MODIFIER}\s+$`, 'i');

function unitOf(text: string, c: chrono.ParsedComponents): Unit {
  for (const [re, unit] of UNIT_IN_TEXT) if (re.test(text)) return unit;
  if (c.isCertain('day') || c.isCertain('weekday')) return 'day';
  if (c.isCertain('month')) return 'month';
  if (c.isCertain('year')) return 'year';
  return 'day';
}

function rawSpan(unit: Unit, c: chrono.ParsedComponents): Span {
  return spanOf(unit, c.get('year')!, c.get('month')! - 1, c.get('day')!);
}

function shiftYears([s, e]: Span, years: number): Span {
  const shift = (ms: number): number => {
    const d = new Date(ms);
    return Date.UTC(d.getUTCFullYear() + years, d.getUTCMonth(), d.getUTCDate());
  };
  return [shift(s), shift(e)];
}

/** Resolves one chrono result, or null when it is not a usable date. */
function fromChrono(r: chrono.ParsedResult, text: string, ref: number): Mention | null {
  const c = r.start;
  const words = r.text.trim();
  if (c.tags().has('casualReference/now')) return null;
  if (EVENT_ANCHORED.test(words)) return null;
  // "the Sunday before the wedding": a weekday counted from an event, not from the reference.
  if (
    c.isCertain('weekday') &&
    WEEKDAY_THEN_ANCHOR.test(text.slice(r.index + r.text.length, r.index + r.text.length + 16))
  )
    return null;
  const before = text.slice(Math.max(0, r.index - 16), r.index);
  if (ABBREVIATED_DAY.test(words)) return null;
  if (AMBIGUOUS_MONTH.test(words) && !DATE_PREPOSITION.test(before)) return null;
  const knowsDate =
    c.isCertain('year') || c.isCertain('month') || c.isCertain('day') || c.isCertain('weekday');
  // A time of day alone ("at 3pm", "in the morning") does not say which day.
  if (!knowsDate && !/\b(?:this|today|tonight)\b/i.test(words)) return null;

  let index = r.index;
  const unit = unitOf(words, c);
  let span = rawSpan(unit, c);
  let yearShift = 0;
  if (!c.isCertain('year')) {
    const future = futureAt(text, r.index);
    if (c.isCertain('month')) {
      // chrono leaves "last"/"next" out of month results ("last June" -> "June").
      const modifier = MONTH_MODIFIER.exec(before);
      if (modifier) index = r.index - modifier[0].length;
      const month = c.get('month')! - 1;
      const day = c.get('day')!;
      const dayKnown = c.isCertain('day');
      const picked = pickYearly(
        (y) => (dayKnown ? spanOf('day', y, month, day) : spanOf('month', y, month, 1)),
        ref,
        pickFor(modifier?.[1], future),
      );
      yearShift = new Date(picked[0]).getUTCFullYear() - c.get('year')!;
      span = picked;
    } else if (c.isCertain('weekday') && !/\b(?:last|next|this|past|previous|coming)\b/i.test(words)) {
      // A bare weekday: chrono takes the nearest one, possibly ahead of the reference.
      const today = dayStart(ref);
      if (!future && span[0] > today) span = [span[0] - 7 * DAY, span[1] - 7 * DAY];
      else if (future && span[1] <= today) span = [span[0] + 7 * DAY, span[1] + 7 * DAY];
    }
  }
  // chrono leaves `end` null (not undefined) when the expression is not a range.
  const merged = Boolean(r.end);
  if (r.end) {
    let endSpan = rawSpan(unitOf('', r.end), r.end);
    if (!r.end.isCertain('year')) endSpan = shiftYears(endSpan, yearShift);
    if (endSpan[1] <= span[0]) endSpan = shiftYears(endSpan, 1);
    span = [span[0], Math.max(span[1], endSpan[1])];
  }
  const tags = c.tags();
  const relative = [...tags].some((t) => t.startsWith('result/relative') || t.startsWith('casualReference/'));
  const absolute = !relative && (c.isCertain('year') || (c.isCertain('month') && c.isCertain('day')));
  return { index, stop: r.index + r.text.length, start: span[0], end: span[1], merged, absolute };
}

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
/** "the Sunday before", "the Friday after": a weekday counted from the date that follows. */
const WEEKDAY_FROM = new RegExp(String.raw`\b(?:the\s+)?(${WEEKDAYS.join('|')})\s+(before|after)\s+`, 'gi');

/**
 * "the Sunday before October 25, 2022": the last Sunday before that date (23 October), and
 * "the Friday after May 1" the first Friday after it. chrono reads such a phrase as a range
 * from the reference's weekday to the date, or drops the weekday.
 */
function addWeekdayFrom(text: string, ref: number, anchor: Date, out: Mention[]): void {
  for (const m of text.matchAll(WEEKDAY_FROM)) {
    const at = m.index + m[0].length;
    // A date starting right after "before"/"after", read alone (its own year picked as usual).
    const tail = text.slice(at, at + 40);
    const r = chrono.casual.parse(tail, { instant: anchor, timezone: 'UTC' }, { forwardDate: false })[0];
    if (r?.index !== 0) continue;
    const date = fromChrono(r, tail, ref);
    if (!date || date.end - date.start > DAY) continue;
    const weekday = WEEKDAYS.indexOf(m[1]!.toLowerCase());
    const after = m[2]!.toLowerCase() === 'after';
    const from = new Date(date.start).getUTCDay();
    const day = after
      ? date.start + (((weekday - from + 6) % 7) + 1) * DAY
      : date.start - (((from - weekday + 6) % 7) + 1) * DAY;
    const stop = at + r.text.length;
    if (out.some((x) => m.index < x.stop && x.index < stop)) continue;
    out.push({ index: m.index, stop, start: day, end: day + DAY, absolute: date.absolute === true });
  }
}

function addYears(text: string, out: Mention[]): void {
  for (const m of text.matchAll(BARE_YEAR)) {
    const stop = m.index + m[0].length;
    if (out.some((x) => m.index < x.stop && x.index < stop)) continue;
    if (/[$£€#\d][.,:/-]?$|[.,:/-]$/.test(text.slice(Math.max(0, m.index - 2), m.index))) continue;
    if (QUANTITY_AFTER.test(text.slice(stop, stop + 12))) continue;
    const y = Number(m[0]);
    out.push({ index: m.index, stop, start: Date.UTC(y, 0, 1), end: Date.UTC(y + 1, 0, 1), absolute: true });
  }
}

const PART_OF_DAY = /\b(?:the\s+)?(?:morning|afternoon|evening|night)\s+of\b/gi;
const RANGE_CONNECTOR = /^\s*(-|\u2013|\u2014|to|until|till|through|and)\s*$/i;
const OPEN_PREFIX = /\b(since|from|after|before|prior to|until|till)\s+$/i;

/** Joins "from X to Y" / "between X and Y", then widens "since X" and "before X". */
function combine(text: string, ref: number, mentions: Mention[]): Mention[] {
  const sorted = mentions.sort((a, b) => a.index - b.index);
  const out: Mention[] = [];
  for (const m of sorted) {
    const prev = out[out.length - 1];
    const connector = prev && RANGE_CONNECTOR.exec(text.slice(prev.stop, m.index));
    if (prev && connector) {
      const isAnd = connector[1]!.toLowerCase() === 'and';
      const lead = /\b(between|from)\s+$/i.exec(text.slice(Math.max(0, prev.index - 10), prev.index));
      if (!isAnd || lead?.[1]?.toLowerCase() === 'between') {
        out[out.length - 1] = {
          index: lead ? prev.index - lead[0].length : prev.index,
          stop: m.stop,
          start: Math.min(prev.start, m.start),
          end: Math.max(prev.end, m.end),
          merged: true,
          absolute: prev.absolute === true && m.absolute === true,
        };
        continue;
      }
    }
    out.push({ ...m });
  }
  const todayEnd = dayStart(ref) + DAY;
  for (const m of out) {
    if (m.merged) continue;
    const open = OPEN_PREFIX.exec(text.slice(Math.max(0, m.index - 10), m.index));
    if (!open) continue;
    const word = open[1]!.toLowerCase();
    if (word === 'since' || word === 'from') {
      m.end = Math.max(m.end, todayEnd);
    } else if (word === 'after') {
      if (m.end >= todayEnd) continue;
      [m.start, m.end] = [m.end, todayEnd];
    } else {
      [m.start, m.end] = [OPEN_START, word === 'until' || word === 'till' ? m.end : m.start];
    }
    m.index -= open[0].length;
  }
  return out;
}

/**
 * Text chrono could read a date or time in holds a digit, a one- or two-letter time unit ("a d",
 * "a mo"), or one of these (as a part of a word: "january" holds "jan", "weekend" "week"): every
 * word of chrono's English casual, relative, weekday, month and time-unit parsers starts with one.
 * Most text holds none, and chrono costs ~0.5 ms per call even when it finds nothing.
 */
const MAY_BE_DATE =
  /\d|\b[smhdwy]\b|\bmos?\b|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|sun|mon|tue|wed|thu|fri|sat|now|today|tonight|tom|tmr|overmorrow|yesterday|night|morning|afternoon|evening|midday|noon|sec|min|hr|hour|day|week|qtr|quarter|year|yr|end/i;

function mentionsIn(text: string, reference: Date): Mention[] {
  const ref = reference.getTime();
  if (!Number.isFinite(ref)) throw new RangeError('invalid reference date');
  const mentions: Mention[] = [];
  addCustom(text, ref, mentions);
  // Blank out what the recognisers took, keeping offsets, so chrono does not read it again.
  // One pass over the mentions in order (rebuilding the text once per mention was quadratic).
  let masked = '';
  let at = 0;
  for (const m of [...mentions].sort((a, b) => a.index - b.index)) {
    if (m.stop <= at) continue;
    const from = Math.max(at, m.index);
    masked += text.slice(at, from) + ' '.repeat(m.stop - from);
    at = m.stop;
  }
  masked += text.slice(at);
  // "the evening of 7 July" is the day: chrono reads the part of day and loses the date.
  masked = masked.replace(PART_OF_DAY, (w) => ' '.repeat(w.length));
  // Some chrono paths ("the day before yesterday", "two weeks before 8 May") do day arithmetic
  // in the host time zone on an instant carrying the reference's hour. Anchoring the reference
  // at 10:00 UTC of its day keeps that arithmetic on the right day for host offsets from -10h
  // to +13h; only the day matters here, never the hour.
  const anchor = new Date(dayStart(ref) + 10 * 3_600_000);
  if (/\b(?:before|after)\b/i.test(masked)) addWeekdayFrom(masked, ref, anchor, mentions);
  const parsed = MAY_BE_DATE.test(masked)
    ? chrono.casual.parse(masked, { instant: anchor, timezone: 'UTC' }, { forwardDate: false })
    : [];
  for (const r of parsed) {
    const m = fromChrono(r, text, ref);
    if (m && !mentions.some((x) => m.index < x.stop && x.index < m.stop)) mentions.push(m);
  }
  addYears(text, mentions);
  return combine(text, ref, mentions);
}

/**
 * Dates mentioned in memory content, resolved against when it was said (e.g. `mentioned_at`),
 * in order of appearance: "yesterday I went to the park" said on 2024-03-15 gives
 * 2024-03-14T00:00Z to 2024-03-15T00:00Z. Used to set occurred_start/occurred_end at retain.
 */
export function findDates(text: string, reference: Date): DateMention[] {
  return mentionsIn(text, reference).map((m) => ({
    start: new Date(m.start),
    end: new Date(m.end),
    text: text.slice(m.index, m.stop),
  }));
}

/**
 * The time range a recall query asks about, or null if it names none (or only relative to
 * an event, as in "two weeks before the wedding"). Several expressions give the range that
 * covers them all ("in May 2023 or June 2023").
 */
export function parseTemporalQuery(query: string, reference: Date): TemporalQuery | null {
  const mentions = mentionsIn(query, reference);
  const first = mentions[0];
  const last = mentions[mentions.length - 1];
  if (!first || !last) return null;
  return {
    start: new Date(Math.min(...mentions.map((m) => m.start))),
    end: new Date(Math.max(...mentions.map((m) => m.end))),
    expression: query.slice(first.index, last.stop),
    absolute: mentions.every((m) => m.absolute === true),
  };
}
