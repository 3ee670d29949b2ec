/**
 * Cutting a text into pieces of bounded length for compromise. compromise splits a text into
 * sentences and tags each; both steps grow faster than linearly in the length of one
 * sentence, and a run of abbreviations ("e.g. e.g. …", "U.S. U.S. …", "Mr. Mr. …", dotted
 * initials) never ends a sentence: 20,000 characters of "Mr. " took ~0.8 s, about 3× per
 * doubling. Handing compromise pieces of at most `max` characters bounds the cost of each,
 * so the whole is linear.
 *
 * A cut is placed where compromise would end a sentence anyway whenever the text has such a
 * place, so that tagging (which looks only within a sentence) gives the same names as on the
 * uncut text: a paragraph break first, then a sentence end after an ordinary word ("… went
 * home. She …"), then a line break, then any space, and only in a text without spaces (CJK)
 * anywhere.
 */

/** Words whose dot does not end a sentence: a cut after "Mrs." would split "Mrs. Smith". */
const ABBREVIATIONS = new Set(
  'dr mr mrs ms mx prof sir rev capt sgt st jr sr vs etc inc ltd co corp gen col lt mt ft no fig approx dept est'.split(
    ' ',
  ),
);

/** A paragraph break (a line with nothing but spaces between two line breaks). */
const PARAGRAPH = /\n[^\S\n]*\n\s*/g;
/** ".", "!" or "?" (and closing quotes or brackets) after a word of 3+ letters, then space. */
const SENTENCE_END = /(?<![\p{L}\p{N}.'\u2019-])(\p{L}\p{Ll}{2,})[.!?]+["'\u201d\u2019)\]]*\s+/gu;
const LINE_BREAK = /\n\s*/g;
const SPACE = /\s+/g;

/** End (exclusive) of the last match of `re` in `window` that `ok` accepts, or -1. */
function lastCut(window: string, re: RegExp, ok: (m: RegExpExecArray) => boolean): number {
  let cut = -1;
  re.lastIndex = 0;
  for (let m = re.exec(window); m; m = re.exec(window)) {
    if (ok(m)) cut = m.index + m[0].length;
  }
  return cut;
}

/** Characters before a window kept so that a match can see the word it starts in. */
const CONTEXT = 80;

/** Where to cut `text` between `from` and `to`: an index in (from, to]. */
function cutIn(text: string, from: number, to: number): number {
  const lead = Math.min(from, CONTEXT);
  const window = text.slice(from - lead, to);
  const after = (m: RegExpExecArray) => m.index + m[0].length > lead;
  const at =
    [
      lastCut(window, PARAGRAPH, after),
      lastCut(window, SENTENCE_END, (m) => after(m) && !ABBREVIATIONS.has(m[1]!.toLowerCase())),
      lastCut(window, LINE_BREAK, after),
      lastCut(window, SPACE, after),
    ].find((i) => i > 0) ?? window.length;
  let cut = from - lead + at;
  // Never between the two halves of a surrogate pair.
  if (cut < text.length && /[\uDC00-\uDFFF]/.test(text[cut]!)) cut--;
  return cut;
}

/**
 * `text` in consecutive pieces of at most `max` characters (together, the whole text): one
 * piece when it is that short. Each cut lies in the second half of its piece, so there are at
 * most about 2·length/max pieces, and each character is searched once.
 */
export function segmentsForTagging(text: string, max: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (text.length - start > max) {
    const cut = cutIn(text, start + Math.floor(max / 2), start + max);
    out.push(text.slice(start, cut));
    start = cut;
  }
  if (start < text.length || out.length === 0) out.push(text.slice(start));
  return out;
}
