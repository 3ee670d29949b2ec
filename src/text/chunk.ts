/**
 * Sentence splitting and token-bounded chunking for retain. Chunks follow the text's own
 * structure: transcript turns ("Name: ...") or paragraphs first, sentences inside a unit that
 * is too long, and words, then raw tokens, only for a sentence that alone exceeds the limit.
 */
import { countTokens, splitByTokens } from './tokens.js';

/** Abbreviations before a name: never the end of a sentence ("Dr. Smith"). */
const TITLES = new Set(
  'dr mr mrs ms mx prof rev fr sr st mt gen gov sen rep lt col capt sgt cpl pvt adm cmdr supt insp'.split(
    ' ',
  ),
);
/** Abbreviations that never end a sentence ("e.g. the", "vs. them", "No. 5"). */
const NEVER_FINAL = new Set('e.g i.e eg ie vs cf viz approx ca fig figs no nos vol pp ch sec'.split(' '));
/**
 * Abbreviations that may end a sentence: "... and so on etc. Then" ends one, "etc. and"
 * does not; decided by the case of the next word.
 */
const MAYBE_FINAL = new Set(
  (
    'etc inc ltd co corp llc jr sr esq phd bsc msc ba ma md a.m p.m am pm u.s u.k u.s.a ' +
    'jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri sat sun ' +
    'dept est min max hr hrs km ft lb lbs oz'
  ).split(' '),
);

// Sentence-final punctuation, closing quotes or brackets, then the whitespace after them.
// Linear on any input: a match starts only where a punctuation run starts (the lookbehind),
// and the runs are taken whole (lookahead + backreference: an atomic group), so a long run
// of dots without a space after it is scanned once, not once per position inside it.
const BOUNDARY = /(?<![.!?\u2026])(?=([.!?\u2026]+))\1(?=(["'\u201d\u2019)\]]*))\2(\s+)/g;
/** Longest word looked at before a full stop: abbreviations and initials are short. */
const MAX_WORD = 32;
const WORD_CHAR = /[\p{L}.]/u;

/** The letters and dots right before `end` (at most MAX_WORD of them, not before `start`). */
function wordBefore(line: string, start: number, end: number): string {
  let i = end;
  const stop = Math.max(start, end - MAX_WORD);
  while (i > stop && WORD_CHAR.test(line[i - 1]!)) i--;
  // A surrogate pair's letters are rare in abbreviations: stopping at one is harmless.
  return line.slice(i, end);
}
const LOWER_START = /^\p{Ll}/u;
const UPPER_START = /^[\p{Lu}\p{N}"'\u201c\u2018([]/u;

/** Should the sentence end at this punctuation, given the text before it and the next word? */
function endsSentence(word: string, punct: string, closers: string, next: string): boolean {
  if (/[!?]/.test(punct)) return !(closers && LOWER_START.test(next));
  if (punct.length > 1 || punct === '\u2026') return UPPER_START.test(next); // an ellipsis
  const lower = word.toLowerCase();
  if (TITLES.has(lower) || NEVER_FINAL.has(lower)) return false;
  if (/^\p{Lu}$/u.test(word)) return false; // an initial: "J. K. Rowling"
  if (MAYBE_FINAL.has(lower) || word.includes('.')) return UPPER_START.test(next);
  return true;
}

/**
 * Sentences of a text, trimmed, in order. Handles abbreviations ("Dr.", "e.g."), initials,
 * decimals ("3.5"), ellipses, and closing quotes ('"Stop." Then...'). Line breaks always
 * end a sentence: in chat logs and notes a line is a unit of its own.
 */
export function splitSentences(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    let start = 0;
    for (const m of line.matchAll(BOUNDARY)) {
      const [whole, punct = '', closers = ''] = m;
      const stop = m.index + whole.length;
      if (!endsSentence(wordBefore(line, start, m.index), punct, closers, line.slice(stop, stop + 2)))
        continue;
      const sentence = line.slice(start, stop).trim();
      if (sentence) out.push(sentence);
      start = stop;
    }
    const rest = line.slice(start).trim();
    if (rest) out.push(rest);
  }
  return out;
}

// A transcript turn starts with a short capitalised speaker label: "Caroline: ...".
const TURN_START = /^\s*(\p{Lu}[\p{L}\p{N} ._'-]{0,40}):\s+/u;

interface Block {
  /** Speaker label of a transcript turn, repeated on each piece if the turn is split. */
  label: string;
  body: string;
}

/** Transcript turns when the text is a transcript (two or more labelled lines), else paragraphs. */
function blocksOf(text: string): { blocks: Block[]; joiner: string } {
  const lines = text.split(/\r?\n/);
  const turnStarts = lines.filter((l) => TURN_START.test(l) && !/^\s*\w+:\/\//.test(l)).length;
  if (turnStarts >= 2) {
    const blocks: Block[] = [];
    for (const line of lines) {
      const m = TURN_START.exec(line);
      const last = blocks[blocks.length - 1];
      if (m) blocks.push({ label: m[1]!, body: line.slice(m[0].length) });
      else if (last) last.body += '\n' + line;
      else if (line.trim()) blocks.push({ label: '', body: line });
    }
    return { blocks, joiner: '\n' };
  }
  const paragraphs = text.split(/\n\s*\n/).filter((p) => p.trim());
  return { blocks: paragraphs.map((p) => ({ label: '', body: p.trim() })), joiner: '\n\n' };
}

/** Greedy packing of units (each within budget) joined by `joiner`, counting tokens per unit. */
function pack(units: string[], joiner: string, budget: number): string[] {
  const chunks: string[] = [];
  let current = '';
  let used = 0;
  for (const unit of units) {
    // A unit's tokens as they appear after the joiner; BPE merges stop at word boundaries,
    // so the sum matches the joined text in practice (and it is checked in chunkText).
    const cost = countTokens(current ? joiner + unit : unit);
    if (current && used + cost > budget) {
      chunks.push(current);
      current = unit;
      used = countTokens(unit);
    } else {
      current = current ? current + joiner + unit : unit;
      used += cost;
    }
  }
  if (current) chunks.push(current);
  return chunks;
}

/** Pieces of one sentence within budget: by words, and by tokens for an over-long word. */
function splitSentence(sentence: string, budget: number): string[] {
  const units: string[] = [];
  for (const word of sentence.split(/\s+/)) {
    if (!word) continue;
    if (countTokens(word) <= budget) units.push(word);
    else units.push(...splitByTokens(word, budget));
  }
  return pack(units, ' ', budget);
}

/** Pieces of a text within budget: sentences packed together, long sentences cut. */
function splitBody(body: string, budget: number): string[] {
  const units: string[] = [];
  for (const sentence of splitSentences(body)) {
    if (countTokens(sentence) <= budget) units.push(sentence);
    else units.push(...splitSentence(sentence, budget));
  }
  return pack(units, ' ', budget);
}

/**
 * Splits text into chunks of at most `maxTokens` o200k_base tokens. Transcript turns
 * ("Name: ...") or paragraphs are kept whole and packed together while they fit; a longer
 * turn is cut between sentences, each piece keeping the speaker label; only a sentence that
 * alone exceeds the limit is cut inside, between words. Text within the limit is returned
 * as one chunk (trimmed); empty text gives no chunks.
 */
export function chunkText(text: string, maxTokens: number): string[] {
  if (!Number.isInteger(maxTokens) || maxTokens < 1)
    throw new RangeError('maxTokens must be a positive integer');
  const trimmed = text.trim();
  if (!trimmed) return [];
  if (countTokens(trimmed) <= maxTokens) return [trimmed];

  const { blocks, joiner } = blocksOf(trimmed);
  const units: string[] = [];
  for (const { label, body } of blocks) {
    const prefix = label ? `${label}: ` : '';
    const whole = prefix + body.trim();
    if (countTokens(whole) <= maxTokens) {
      units.push(whole);
      continue;
    }
    // Repeating the label is worth it only while it leaves most of the budget to the text.
    const repeated = countTokens(prefix) <= maxTokens / 4 ? prefix : '';
    const budget = maxTokens - countTokens(repeated);
    for (const piece of splitBody(body, budget)) units.push(repeated + piece);
  }
  // The per-unit sums are exact in practice; re-cut anything BPE merged past the limit.
  return pack(units, joiner, maxTokens).flatMap((c) =>
    countTokens(c) <= maxTokens ? [c] : splitBody(c, maxTokens),
  );
}
