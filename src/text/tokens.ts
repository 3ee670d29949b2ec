import {
  countTokens as bpeCount,
  clearMergeCache,
  decode,
  encode,
  setMergeCacheSize,
} from 'gpt-tokenizer/encoding/o200k_base';

// gpt-tokenizer caches merged words in an LRU over a Map that evicts its oldest key: once full,
// each eviction walks the Map's deleted slots, and counting became superlinear (40,000 new
// words: 11 s instead of 3 s) and 4× slower on ordinary chat lines. Without a cache, chunking
// re-counts the same long runs several times (4× slower on 10 KB without a space). So the
// cache is emptied whole after every CACHE_WINDOW characters counted: it holds at most one
// entry per character of the window plus one text (at most 100,000 characters), so it never
// fills up and never evicts.
const CACHE_WINDOW = 200_000;
setMergeCacheSize(CACHE_WINDOW + 120_000);
let counted = 0;

function charge(chars: number): void {
  if (counted + chars > CACHE_WINDOW) {
    clearMergeCache();
    counted = 0;
  }
  counted += chars;
}

// gpt-tokenizer throws on special-token text such as "<|endoftext|>" by default; memory
// content is data, so such text is counted as the ordinary characters it is.
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * Longest run (of non-space, or of space characters) handed to BPE in one piece. BPE is
 * quadratic in the length of a pre-token (one 100,000-letter word took ~10 s), so longer runs
 * are cut every MAX_RUN characters: counts stay linear in the input, exact for any text
 * without such runs (no word of a natural language comes near), and over by a few tokens
 * per cut otherwise (a token per cut for letters; more for runs of one symbol, which BPE
 * covers with tokens longer than a piece).
 */
export const MAX_RUN = 64;

const isSpace = (c: number) =>
  c === 32 ||
  (c >= 9 && c <= 13) ||
  (c > 127 &&
    (c === 0xa0 ||
      c === 0x1680 ||
      (c >= 0x2000 && c <= 0x200a) ||
      c === 0x2028 ||
      c === 0x2029 ||
      c === 0x202f ||
      c === 0x205f ||
      c === 0x3000 ||
      c === 0xfeff));
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/**
 * The text cut inside every run longer than MAX_RUN (never between the halves of a surrogate
 * pair); the text itself, as the only piece, when it has no such run. One pass, no regex.
 */
export function boundedPieces(text: string): string[] {
  if (text.length <= MAX_RUN) return [text];
  const pieces: string[] = [];
  let from = 0;
  let runStart = 0;
  let runSpace = isSpace(text.charCodeAt(0));
  for (let i = 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const space = isSpace(c);
    if (space !== runSpace) {
      runSpace = space;
      runStart = i;
    } else if (i - runStart >= MAX_RUN && !isLowSurrogate(c)) {
      pieces.push(text.slice(from, i));
      from = i;
      runStart = i;
    }
  }
  pieces.push(text.slice(from));
  return pieces;
}

/** Token count with OpenAI's o200k_base BPE, used for recall budgets and chunking; linear in the text. */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  charge(text.length);
  let n = 0;
  for (const piece of boundedPieces(text)) n += bpeCount(piece, AS_TEXT);
  return n;
}

/**
 * Whether `text` has more than `max` o200k_base tokens (`countTokens(text) > max`). A text of at
 * most `max` UTF-8 bytes cannot (every token is at least one byte, in every piece), so it is
 * answered without running BPE: a Recall's query check, on every request.
 */
export function tokensExceed(text: string, max: number): boolean {
  if (text.length <= max / 3 || Buffer.byteLength(text, 'utf8') <= max) return false;
  return countTokens(text) > max;
}

/**
 * Cuts text into pieces of at most `maxTokens` o200k_base tokens, at token boundaries.
 * A last resort for text with no better place to cut (a long URL, a run without spaces).
 */
export function splitByTokens(text: string, maxTokens: number): string[] {
  charge(text.length);
  const tokens = boundedPieces(text).flatMap((p) => encode(p, AS_TEXT));
  const pieces: string[] = [];
  for (let i = 0; i < tokens.length; i += maxTokens) pieces.push(decode(tokens.slice(i, i + maxTokens)));
  return pieces;
}
