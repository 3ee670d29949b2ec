/**
 * How a new memory relates to an earlier statement, decided without a language model from
 * word overlap, polarity (negation) and a short list of single-valued relations.
 *
 * - `same`: a restatement (or a less specific one): it supports the earlier statement.
 * - `refines`: it says everything the earlier one did, and more.
 * - `contradicts`: the same statement with the opposite polarity ("likes" / "doesn't like",
 *   "works at" / "no longer works at"), or a single-valued relation with another value
 *   ("lives in Paris" / "lives in Berlin", "is 30" / "is 31").
 * - `unrelated`: anything else. The rules are deliberately conservative: a merge or a conflict
 *   they miss costs less than a false one.
 */
import { keywordTerms } from '../../text/terms.js';

export type Relation = 'same' | 'refines' | 'contradicts' | 'unrelated';

/** Words that flip a statement. "no longer" and "anymore" are handled as phrases. */
const NEGATORS = new Set([
  'not',
  'no',
  'never',
  'nobody',
  'nothing',
  'neither',
  'nor',
  'cannot',
  'stopped',
  'quit',
]);

/** "don't", "isn't", "can't", "won't", also typed without the apostrophe. */
const NEGATED_AUXILIARY =
  /^(?:do|does|did|is|are|was|were|has|have|had|ca|could|would|should|wo|ai|must|need)n['’]?t$/;

/** Verbs of liking and their opposites, folded to one stem so the polarity carries the difference. */
const OPPOSITES = new Map<string, { word: string; negated: boolean }>();
for (const w of [
  'like',
  'likes',
  'liked',
  'love',
  'loves',
  'loved',
  'enjoy',
  'enjoys',
  'enjoyed',
  'adore',
  'adores',
]) {
  OPPOSITES.set(w, { word: 'like', negated: false });
}
for (const w of [
  'dislike',
  'dislikes',
  'disliked',
  'hate',
  'hates',
  'hated',
  'detest',
  'detests',
  'detested',
]) {
  OPPOSITES.set(w, { word: 'like', negated: true });
}

/**
 * Relations that hold one value at a time: a statement that differs from another only in the
 * words right after one of these is a conflict, not an addition.
 */
const SINGLE_VALUED = [
  'lives in',
  'live in',
  'living in',
  'lives at',
  'moved to',
  'relocated to',
  'based in',
  'is from',
  'comes from',
  'works at',
  'works for',
  'work at',
  'work for',
  'working at',
  'working for',
  'works as',
  'job is',
  'job as',
  'studies at',
  'majoring in',
  'favorite',
  'favourite',
  'name is',
  'named',
  'called',
  'born in',
  'born on',
  'birthday is',
  'married to',
  'engaged to',
  'email is',
  'phone number is',
  'address is',
  'prefers',
  'prefer',
].map((cue) => cue.split(' '));

/** Words after which a number is a single value ("is 30", "at 3pm", "costs 12"), unlike a label ("entry 3"). */
const NUMERIC_CUES = new Set([
  'is',
  'was',
  'are',
  'at',
  'age',
  'aged',
  'turned',
  'turns',
  'costs',
  'cost',
  'paid',
  'pays',
  'earns',
  'weighs',
  'number',
  'until',
  'by',
  'from',
]);

interface Statement {
  /** Content terms, stemmed, with liking verbs folded. */
  terms: Set<string>;
  negated: boolean;
  /** Lower-case words in order, for aligning two statements. */
  words: string[];
}

function analyse(text: string): Statement {
  const raw = text.toLowerCase().match(/[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu) ?? [];
  let flips = 0;
  const kept: string[] = [];
  for (let i = 0; i < raw.length; i++) {
    const w = raw[i]!;
    const next = raw[i + 1];
    if ((w === 'no' && next === 'longer') || (w === 'any' && next === 'more')) {
      flips++;
      i++;
      continue;
    }
    if (w === 'anymore') {
      // "not ... anymore" is one negation, not two.
      if (flips === 0) flips++;
      continue;
    }
    if (NEGATORS.has(w) || NEGATED_AUXILIARY.test(w)) {
      flips++;
      continue;
    }
    const opposite = OPPOSITES.get(w);
    if (opposite) {
      if (opposite.negated) flips++;
      kept.push(opposite.word);
      continue;
    }
    kept.push(w);
  }
  return { terms: new Set(keywordTerms(kept.join(' '))), negated: flips % 2 === 1, words: kept };
}

const isNumber = (w: string) => /^\d[\d.,:]*(?:am|pm|st|nd|rd|th|k|m)?$/.test(w);

function endsWithCue(prefix: string[]): boolean {
  const tail = prefix.slice(-4);
  return SINGLE_VALUED.some((cue) => tail.some((_, i) => cue.every((c, j) => tail[i + j] === c)));
}

/**
 * Two statements that are the same words but for a short span, where the span follows a
 * single-valued relation or is a number on both sides.
 */
function slotConflict(a: string[], b: string[]): boolean {
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p++;
  let q = 0;
  while (q < a.length - p && q < b.length - p && a[a.length - 1 - q] === b[b.length - 1 - q]) q++;
  const da = a.slice(p, a.length - q);
  const db = b.slice(p, b.length - q);
  if (da.length === 0 || db.length === 0 || da.length > 3 || db.length > 3 || p < 2) return false;
  if (da.length === 1 && db.length === 1 && isNumber(da[0]!) && isNumber(db[0]!)) {
    return a.slice(Math.max(0, p - 3), p).some((w) => NUMERIC_CUES.has(w));
  }
  const ta = keywordTerms(da.join(' '));
  const tb = keywordTerms(db.join(' '));
  if (ta.length === 0 || tb.length === 0 || ta.some((t) => tb.includes(t))) return false;
  return endsWithCue(a.slice(0, p));
}

/**
 * The relation of `next` (a new memory) to `earlier` (an observation or an older memory).
 * Entity lists, when both sides have them, must share a name.
 */
export function judge(
  next: string,
  earlier: string,
  entities: { next?: string[]; earlier?: string[] } = {},
): Relation {
  const en = entities.next?.map((e) => e.toLowerCase()) ?? [];
  const ee = entities.earlier?.map((e) => e.toLowerCase()) ?? [];
  if (en.length && ee.length && !en.some((e) => ee.includes(e))) return 'unrelated';
  const a = analyse(next);
  const b = analyse(earlier);
  if (a.terms.size < 2 || b.terms.size < 2) return 'unrelated';
  let shared = 0;
  for (const t of a.terms) if (b.terms.has(t)) shared++;
  if (shared === 0) return 'unrelated';
  const union = a.terms.size + b.terms.size - shared;
  if (a.negated !== b.negated) {
    return shared >= 2 && shared / Math.min(a.terms.size, b.terms.size) >= 0.75 ? 'contradicts' : 'unrelated';
  }
  if (slotConflict(a.words, b.words)) return 'contradicts';
  if (shared === b.terms.size && a.terms.size > b.terms.size) return 'refines';
  if (shared / union >= 0.7) return 'same';
  if (shared / b.terms.size >= 0.8 && a.terms.size > b.terms.size) return 'refines';
  if (shared / a.terms.size >= 0.8 && b.terms.size > a.terms.size) return 'same';
  return 'unrelated';
}

/** How many content terms a statement carries: the more specific of two agreeing texts wins. */
export function specificity(text: string): number {
  return analyse(text).terms.size;
}
