/**
 * Named entities without a language model: compromise's part-of-speech tagger (its lexicon
 * knows many first names, places and companies, and tags them Person, Place, Organization),
 * a capitalised-name heuristic for names it does not know, speaker labels of transcript lines
 * ("Caroline: ..."), and chrono-node for explicit calendar dates.
 *
 * compromise is used through its tagged terms rather than `.people()`/`.places()`/
 * `.organizations()`: those return one span per tag, with trailing punctuation
 * ("Melanie."), possessives ("Caroline's"), and miss speaker labels, which compromise tags as
 * an interjection. One tagging pass serves all three entity kinds and the heuristic.
 */
import * as chrono from 'chrono-node';
import nlp from 'compromise';
import { segmentsForTagging } from './segments.js';
import { isStopWord } from './terms.js';

export type EntityType = 'PERSON' | 'PLACE' | 'ORGANIZATION' | 'DATE' | 'OTHER';

/** An entity mentioned in a text: its surface form (possessive removed) and kind. */
export interface Entity {
  text: string;
  type: EntityType;
}

/** A tagged word as compromise stores it: text, surrounding punctuation, tags. */
type Term = ReturnType<typeof nlp>['document'][number][number];

// "Name:" at the start of a line, up to three capitalised words, is a speaker in a transcript.
const SPEAKER = /^\s*(\p{Lu}[\p{L}'\u2019.-]*(?:\s+\p{Lu}[\p{L}'\u2019.-]*){0,2})\s*:\s+/u;
/** Labels that start lines but name no person. */
const NOT_SPEAKERS = new Set(
  (
    'user assistant system bot ai human note notes q a question answer summary subject date time ' +
    'update ps re tldr example todo warning error tip step'
  ).split(' '),
);

/** Lower-case words allowed inside a name: "Bank of America", "Lord of the Rings". */
const CONNECTORS = new Set('of the de da di del der van von la le du y'.split(' '));
const HONORIFICS = new Set('dr mr mrs ms mx prof sir dame rev capt sgt st'.split(' '));
/** Words that start a sentence in capitals but do not name anything. */
const SENTENCE_STARTERS = new Set(
  (
    'yesterday today tonight tomorrow hey hi hello thanks thank wow oh yes yeah yep nope sure well ' +
    'anyway also congrats congratulations great awesome cool nice haha lol omg sorry please ok okay ' +
    'good glad love lovely definitely absolutely totally honestly actually really maybe last next ' +
    'sounds looks seems hope wish guess'
  ).split(' '),
);
const ORGANIZATION_WORDS = new Set(
  (
    'inc corp corporation company co ltd llc plc gmbh group university college school academy ' +
    'institute foundation association society club church bank hospital clinic agency council ' +
    'committee department ministry studio studios team league federation union network press ' +
    'media labs records airlines charity shelter'
  ).split(' '),
);
const PLACE_WORDS = new Set(
  (
    'city town village county state province country island islands street avenue road boulevard ' +
    'park lake river mountain mountains mount beach bay valley falls canyon forest desert coast ' +
    'harbor harbour square bridge museum airport station mall zoo garden gardens'
  ).split(' '),
);

const MONTH_NAME = /\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b/i;
const POSSESSIVE = /['\u2019]s?$/;
const UPPER_INITIAL = /^\p{Lu}/u;
const ALL_CAPS = /^[\p{Lu}\p{N}&]+$/u;

function hasTag(t: Term, ...tags: string[]): boolean {
  return tags.some((tag) => t.tags?.has(tag));
}

/** Could this term be part of a name? `initial`: first word of its sentence. */
function nameLike(t: Term, initial: boolean, shouting: boolean): boolean {
  const word = t.text.replace(POSSESSIVE, '');
  if (!word || hasTag(t, 'Pronoun', 'Date', 'Value', 'Month', 'WeekDay')) return false;
  const lower = word.toLowerCase();
  const tagged = hasTag(t, 'Person', 'Place', 'Organization');
  if (!UPPER_INITIAL.test(word)) return tagged && !isStopWord(lower);
  if (word === 'I' || (shouting && ALL_CAPS.test(word) && !tagged)) return false;
  // A capital at the start of a sentence says nothing: trust only the tagger there.
  if (initial)
    return (tagged || hasTag(t, 'ProperNoun')) && !isStopWord(lower) && !SENTENCE_STARTERS.has(lower);
  return !isStopWord(lower) || tagged;
}

function typeOf(span: Term[]): EntityType {
  const words = span.map((t) => t.text.replace(POSSESSIVE, '').toLowerCase());
  // Head words settle names the tagger leaves untyped: "University of X", "Lake Y", "Z Park".
  if (span.some((t) => hasTag(t, 'Organization')) || words.some((w) => ORGANIZATION_WORDS.has(w))) {
    return 'ORGANIZATION';
  }
  if (span.some((t) => hasTag(t, 'Place')) || PLACE_WORDS.has(words[0]!) || PLACE_WORDS.has(words.at(-1)!)) {
    return 'PLACE';
  }
  if (span.some((t) => hasTag(t, 'Person', 'Honorific'))) return 'PERSON';
  return 'OTHER';
}

function spanText(span: Term[]): string {
  return span
    .map((t, i) => {
      const word = i === span.length - 1 ? t.text.replace(POSSESSIVE, '') : t.text;
      return HONORIFICS.has(t.text.toLowerCase()) && t.post.startsWith('.') ? word + '.' : word;
    })
    .join(' ');
}

/** Do the connectors from `i` on ("of", "of the") lead to another name word? */
function connects(sentence: Term[], i: number): boolean {
  for (let j = i; j < sentence.length && j < i + 3; j++) {
    const t = sentence[j]!;
    if (!CONNECTORS.has(t.text.toLowerCase())) return j > i && nameLike(t, false, false);
    if (/[^\s]/.test(t.post)) return false;
  }
  return false;
}

/** Name spans in one tagged sentence. */
function namesIn(sentence: Term[], out: Entity[]): void {
  const words = sentence.filter((t) => /\p{L}/u.test(t.text));
  const shouting = words.length > 2 && words.filter((t) => ALL_CAPS.test(t.text)).length > words.length / 2;
  let span: Term[] = [];
  const flush = (): void => {
    // Connectors may not end a name; "The" may not start one ("The Beatles" -> "Beatles").
    while (span.length > 0 && CONNECTORS.has(span[span.length - 1]!.text.toLowerCase())) span.pop();
    while (span.length > 1 && /^(?:the|a|an)$/i.test(span[0]!.text)) span.shift();
    if (span.length > 0) out.push({ text: spanText(span), type: typeOf(span) });
    span = [];
  };
  for (let i = 0; i < sentence.length; i++) {
    const t = sentence[i]!;
    if (span.length > 0 && /["\u201c([]/.test(t.pre)) flush();
    const connector = span.length > 0 && !/[^\s]/.test(span[span.length - 1]!.post) && connects(sentence, i);
    if (connector || nameLike(t, i === 0, shouting)) {
      span.push(t);
      const honorificDot = HONORIFICS.has(t.text.toLowerCase()) && /^\.\s*$/.test(t.post);
      // Punctuation after a word ends the name, except the dot of "Dr.", and so does "'s".
      if ((/[^\s]/.test(t.post) && !honorificDot) || POSSESSIVE.test(t.text)) flush();
    } else {
      flush();
    }
  }
  flush();
}

/** Explicit calendar dates ("8 May 2023", "June 2023"), not relative ones ("yesterday"). */
function datesIn(text: string, out: Entity[]): void {
  for (const r of chrono.casual.parse(text, undefined, { forwardDate: false })) {
    const c = r.start;
    const tags = r.tags();
    if (tags.has('result/relativeDate') || [...tags].some((t) => t.startsWith('casualReference'))) continue;
    if (!c.isCertain('month') && !c.isCertain('year')) continue;
    // "this month" is certain about the month but names none.
    if (!/\d/.test(r.text) && !MONTH_NAME.test(r.text)) continue;
    if (/^(?:may|march)$/i.test(r.text)) continue;
    out.push({ text: r.text.replace(/^(?:on|in|at|from)\s+/i, '').trim(), type: 'DATE' });
  }
}

/** Runs of punctuation or whitespace, and words longer than any name, cut short before tagging. */
const LONG_RUN = /[^\p{L}\p{N}\s]{9,}|\s{9,}|\S{65,}/gu;

/**
 * The text with long runs of punctuation or whitespace shortened (to their first three
 * characters, or to one line break or space) and words of over 64 characters left out:
 * compromise's tagging is quadratic in such runs (16,000 dots took ~1 s, 20,000 characters of
 * "a.a.a." ~3 s), and no name is in one.
 */
function shortenRuns(text: string): string {
  return text.replace(LONG_RUN, (run) => {
    if (/\S/.test(run)) return run.length > 64 ? ' ' : run.slice(0, 3);
    return run.includes('\n') ? '\n\n' : ' ';
  });
}

/** The longest text compromise tags at once ({@link segmentsForTagging}). */
export const TAGGED_PIECE = 1000;

/**
 * People, places, organisations, explicit dates and other proper names in a text, in order
 * of first appearance, each once (case-insensitive). Possessives are removed
 * ("Caroline's" -> "Caroline"); sentence-initial capitals ("Yesterday", "The") are not names
 * unless the tagger knows the word as one.
 */
export function extractEntities(text: string, pieceChars = TAGGED_PIECE): Entity[] {
  const found: Entity[] = [];
  const body = text
    .split('\n')
    .map((line) => {
      const m = SPEAKER.exec(line);
      if (!m || NOT_SPEAKERS.has(m[1]!.toLowerCase())) return line;
      found.push({ text: m[1]!, type: 'PERSON' });
      return line.slice(m[0].length);
    })
    .join('\n');
  for (const piece of segmentsForTagging(shortenRuns(body), pieceChars)) {
    for (const sentence of nlp(piece).document) namesIn(sentence, found);
  }
  datesIn(body, found);

  const seen = new Map<string, Entity>();
  for (const e of found) {
    const key = e.text.toLowerCase();
    const prior = seen.get(key);
    if (!prior) seen.set(key, e);
    else if (prior.type === 'OTHER' && e.type !== 'OTHER') prior.type = e.type;
  }
  return [...seen.values()];
}

/**
 * The speaker of a transcript line ("Caroline: I went..." -> "Caroline"), or null when the text
 * does not start with a speaker label. Recall treats the speaker as the entity a memory is most
 * about: a question naming a person is usually answered by what that person said.
 */
export function speakerOf(text: string): string | null {
  const m = SPEAKER.exec(text);
  return m && !NOT_SPEAKERS.has(m[1]!.toLowerCase()) ? m[1]! : null;
}

/**
 * Names a recall query refers to, for entity lookup: the people, places, organisations and
 * other proper names of {@link extractEntities}, without dates. Lower-case names are found
 * when compromise knows them ("what did caroline do in boston" -> caroline, boston).
 */
export function queryEntityCandidates(query: string): string[] {
  return extractEntities(query)
    .filter((e) => e.type !== 'DATE')
    .map((e) => e.text);
}
