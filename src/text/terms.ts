/**
 * Keyword terms for the BM25 channel. Documents and queries go through the same function so
 * that a query term and the document term it should hit reduce to the same string.
 *
 * Pipeline: fold case and accents, tokenise into words and numbers, drop English function
 * words, then stem lightly. The stemmer is deliberately conservative (inflection plus a few
 * derivational suffixes): on LoCoMo, light stemming is worth about three points of recall@10
 * over none, while aggressive stemming merges unrelated words.
 */

/** English function words; numbers, names and content words (even short ones) are kept. */
const STOP_WORDS = new Set(
  (
    'a about above after again against all also am among an and any are around as at be because ' +
    'been before being below between both but by can could did do does doing down during each ' +
    'either else even ever every few for from further had has have having he her here hers herself ' +
    'him himself his how i if in into is it its itself just me might more most must my myself ' +
    'neither no nor not now of off oh ok okay on once only or other ought our ours ourselves out ' +
    'over own same shall she should since so some such than that the their theirs them themselves ' +
    'then there these they this those though through to too uh um under until up upon us very was ' +
    'we were what whatever when whenever where whether which while who whom whose why will with ' +
    'within without would yeah yet you your yours yourself yourselves gonna gotta wanna ' +
    // Contractions typed without the apostrophe; not "ill", "wed", "shed", "id", which are words.
    'aint arent cant couldnt didnt doesnt dont hadnt hasnt havent im isnt ive mightnt mustnt ' +
    'shouldnt theyd theyll theyre theyve wasnt werent wont wouldnt youd youll youre youve'
  ).split(' '),
);

/** Is this lower-case word an English function word ("the", "which", "dont")? */
export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}

/**
 * Irregular forms mapped to the base the regular rules then stem, so "met" meets "meeting"
 * and "went" meets "going". Only frequent words: each entry is a guaranteed collision.
 */
const IRREGULAR = new Map<string, string>(
  (
    'went:go gone:go goes:go going:go ran:run saw:see seen:see met:meet made:make took:take ' +
    'taken:take came:come got:get gotten:get gave:give given:give bought:buy brought:bring ' +
    'thought:think felt:feel told:tell said:say says:say wrote:write written:write ate:eat ' +
    'eaten:eat drank:drink drove:drive driven:drive flew:fly flown:fly began:begin begun:begin ' +
    'knew:know known:know found:find kept:keep left:leave lost:lose taught:teach caught:catch ' +
    'sang:sing sung:sing swam:swim won:win spent:spend built:build sent:send slept:sleep ' +
    'heard:hear held:hold wore:wear worn:wear chose:choose chosen:choose grew:grow grown:grow ' +
    'drew:draw drawn:draw fell:fall fallen:fall forgot:forget forgotten:forget became:become ' +
    'sat:sit stood:stand understood:understand paid:pay using:use children:child men:man ' +
    'women:woman people:person feet:foot teeth:tooth mice:mouse geese:goose lives:life wives:wife ' +
    'knives:knife leaves:leaf wolves:wolf halves:half shelves:shelf'
  )
    .split(' ')
    .map((pair) => pair.split(':') as [string, string]),
);

/** Words the suffix rules would damage or merge with an unrelated word ("news" -> "new"). */
const KEEP = new Set(
  (
    'news series species always perhaps towards afterwards sometimes christmas physics mathematics ' +
    'economics politics gymnastics athletics business question morning evening ceiling during ' +
    'nothing something anything everything thing things indeed'
  ).split(' '),
);

const VOWEL = /[aeiouy]/;

/** Is the letter at `i` a consonant? "y" counts as a vowel after a consonant ("try", "happy"). */
function isConsonant(w: string, i: number): boolean {
  const c = w[i];
  if (c === 'a' || c === 'e' || c === 'i' || c === 'o' || c === 'u') return false;
  if (c === 'y') return i === 0 || !isConsonant(w, i - 1);
  return true;
}

/** Porter's measure: the number of vowel-consonant sequences, roughly the syllables after the first. */
function measure(w: string): number {
  let m = 0;
  let prevVowel = false;
  for (let i = 0; i < w.length; i++) {
    const vowel = !isConsonant(w, i);
    if (prevVowel && !vowel) m++;
    prevVowel = vowel;
  }
  return m;
}

/** Ends consonant-vowel-consonant, the last not w, x or y: short stems like "hop", "car", "hik". */
function endsCvc(w: string): boolean {
  const n = w.length;
  return (
    n >= 3 && isConsonant(w, n - 1) && !isConsonant(w, n - 2) && isConsonant(w, n - 3) && !/[wxy]$/.test(w)
  );
}

/** Inflectional step: plurals and third person "-s". */
function stripPlural(w: string): string {
  if (w.length < 4 || !w.endsWith('s')) return w;
  if (w.endsWith('sses')) return w.slice(0, -2);
  // "stories" -> "stori" (= "story" after the y rule), "movies" -> "movi" (= "movie"); "ties" -> "tie".
  if (w.endsWith('ies')) return w.length > 4 ? w.slice(0, -2) : w.slice(0, -1);
  if (w.endsWith('ss') || w.endsWith('us') || w.endsWith('is')) return w;
  // "boxes", "churches", "wishes" lose "es"; elsewhere the base ends in "e" ("roses", "sizes").
  if (/(?:x|ch|sh)es$/.test(w)) return w.slice(0, -2);
  return w.slice(0, -1);
}

/** After "-ed"/"-ing" removal, repair the stem the way Porter's step 1b does. */
function repairStem(s: string): string {
  if (/(?:at|bl|iz)$/.test(s)) return s + 'e';
  // "runn" -> "run", "wedd" -> "wed"; l, s, z double in base forms ("fall", "miss", "buzz"),
  // and three-letter stems ("add", "egg") are base forms too.
  if (s.length >= 4 && /([bcdfghjkmnpqrtvwx])\1$/.test(s)) return s.slice(0, -1);
  // "hik" -> "hike", "car" -> "care": short stems lost an "e" ("hiking", "caring").
  if (measure(s) === 1 && endsCvc(s)) return s + 'e';
  return s;
}

/** Inflectional step: past tense and progressive. */
function stripVerb(w: string): string {
  if (w.endsWith('eed')) {
    // "agreed" -> "agree", but "need", "speed", "proceed" are base forms.
    return w.length >= 5 && !/^(?:bleed|breed|greed|speed|steed|tweed)$|ceed$/.test(w) ? w.slice(0, -1) : w;
  }
  if (w.endsWith('ied')) return w.length > 4 ? w.slice(0, -2) : w.slice(0, -1);
  if (w.endsWith('ed')) {
    const s = w.slice(0, -2);
    return s.length >= 2 && VOWEL.test(s) ? repairStem(s) : w;
  }
  if (w.endsWith('ing')) {
    // A stem of at least three letters with a vowel keeps "thing", "bring", "sing" whole.
    const s = w.slice(0, -3);
    return s.length >= 3 && VOWEL.test(s) ? repairStem(s) : w;
  }
  return w;
}

/** Derivational step: a few suffixes whose removal rarely merges unrelated words. */
function stripDerivation(w: string): string {
  if (w.endsWith('iness') && w.length >= 7) return w.slice(0, -4);
  if (w.endsWith('ness') && w.length >= 8) return w.slice(0, -4);
  if (w.endsWith('ment') && w.length >= 8) return w.slice(0, -4);
  // "adoption" -> "adopt", "education" -> "educat" (= "educate" after final-e removal).
  if (w.endsWith('tion') && w.length >= 8) return w.slice(0, -3);
  if (w.endsWith('ily') && w.length >= 7) return w.slice(0, -2);
  if (w.endsWith('bly') && w.length >= 6) return w.slice(0, -1) + 'e';
  // Length limit spares "family", "really", "only", "supply" and names like "Emily".
  if (w.endsWith('ly') && w.length >= 7 && !w.endsWith('ply')) return w.slice(0, -2);
  return w;
}

/**
 * Light English stemmer in the spirit of Porter's step 1 plus a handful of step-2 suffixes.
 * The output is a matching key, not necessarily a word ("story", "stories" -> "stori").
 */
export function stem(word: string): string {
  if (word.length <= 2) return word;
  if (/\d/.test(word)) return stemNumber(word);
  let w = IRREGULAR.get(word) ?? word;
  if (KEEP.has(w)) return w;
  w = stripDerivation(stripVerb(stripPlural(w)));
  // A final "e" goes unless the stem is short and ends consonant-vowel-consonant, so that
  // "dance"/"dancing" meet while "care" and "car", "plane" and "plan" stay apart.
  if (w.endsWith('e') && !w.endsWith('ee')) {
    const s = w.slice(0, -1);
    const m = measure(s);
    if (m > 1 || (m === 1 && !endsCvc(s))) w = s;
  }
  // "story"/"stories", "study"/"studied", "happy"/"happily" meet on "-i".
  if (w.length >= 3 && w.endsWith('y') && isConsonant(w, w.length - 2)) w = w.slice(0, -1) + 'i';
  return w;
}

/** "8th" -> "8", "1990s" -> "1990"; other alphanumerics ("3pm", "covid19") stay whole. */
function stemNumber(w: string): string {
  const m = /^(\d+)(?:st|nd|rd|th|s)$/.exec(w);
  return m ? m[1]! : w;
}

// Numbers (with inner separators, so "3.5" and "1,000" stay whole), e-mail addresses, and
// words with inner apostrophes. Hyphens split words: "self-care" -> "self", "care".
const WORD = String.raw`\p{N}+(?:[.,]\p{N}+)+|[\p{L}\p{N}]+(?:['\u2019][\p{L}\p{N}]+)*`;
const TOKEN = new RegExp(WORD, 'gu');
// The e-mail alternative makes every word a failed attempt first, so it is used only when needed.
const TOKEN_OR_EMAIL = new RegExp(
  String.raw`[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+|` + WORD,
  'gu',
);
const NON_ASCII = /[\u0080-\uffff]/;
const COMBINING = /\p{M}+/gu;
const APOSTROPHE = /['\u2019]/;
/** Endings cut off after an apostrophe: possessive "'s" and the clitics of "I'll", "we'd", "I'm". */
const CLITICS = new Set(['s', 'll', 'd', 'm', 've', 're']);

// Stems are pure functions of the word and chat vocabulary is small, so a bounded memo pays.
const stemCache = new Map<string, string>();
const STEM_CACHE_LIMIT = 50_000;

function cachedStem(word: string): string {
  let s = stemCache.get(word);
  if (s === undefined) {
    s = stem(word);
    if (stemCache.size >= STEM_CACHE_LIMIT) stemCache.clear();
    stemCache.set(word, s);
  }
  return s;
}

/** The word of a token with an apostrophe: "Caroline's" -> "caroline", "I'll" -> "i", "don't" -> "". */
function unclitic(token: string): string {
  const parts = token.split(APOSTROPHE);
  if (parts.length === 2) {
    const [base = '', suffix = ''] = parts;
    // Negated auxiliaries ("don't", "wasn't") are function words through and through.
    if (suffix === 't' && base.endsWith('n')) return '';
    if (CLITICS.has(suffix)) return base;
  }
  return parts.join(''); // "o'neill", "rock'n'roll"
}

function pushWord(out: string[], raw: string): void {
  const word = APOSTROPHE.test(raw) ? unclitic(raw) : raw;
  if (word.length < 2 && !/\d/.test(word)) return;
  if (STOP_WORDS.has(word)) return;
  // "3 pm" and "3pm" must meet.
  const prev = out[out.length - 1];
  if ((word === 'am' || word === 'pm') && prev !== undefined && /^\d{1,2}$/.test(prev)) {
    out[out.length - 1] = prev + word;
    return;
  }
  out.push(cachedStem(word));
}

/**
 * Keyword terms for the BM25 channel: lower-cased, accents folded, stop words removed,
 * lightly stemmed; names and numbers kept. Same function for indexing and for queries.
 */
export function keywordTerms(text: string): string[] {
  let t = text.toLowerCase();
  if (NON_ASCII.test(t)) t = t.normalize('NFKD').replace(COMBINING, '').normalize('NFC');
  const out: string[] = [];
  for (const m of t.matchAll(t.includes('@') ? TOKEN_OR_EMAIL : TOKEN)) {
    const tok = m[0];
    if (tok.includes('@')) {
      // The whole address for exact hits, and its parts so "gmail" or a name still matches.
      out.push(tok);
      for (const part of tok.split(/[^\p{L}\p{N}]+/u)) if (part) pushWord(out, part);
    } else if (tok.includes(',') && /^\p{N}/u.test(tok)) {
      pushWord(out, tok.replace(/,/g, ''));
    } else {
      pushWord(out, tok);
    }
  }
  return out;
}

/** Term counts of `keywordTerms(text)`, for BM25 document vectors. */
export function termFrequencies(text: string): Map<string, number> {
  const tf = new Map<string, number>();
  for (const term of keywordTerms(text)) tf.set(term, (tf.get(term) ?? 0) + 1);
  return tf;
}
