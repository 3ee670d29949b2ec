/**
 * Doubling tests of the text paths of Retain and Recall (issue 18): on runs without spaces,
 * long runs of punctuation or spaces, and other shapes that used to be quadratic (one
 * 100,000-letter word took ~10 s to count), doubling the input at most ~doubles the time.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { clearMergeCache } from 'gpt-tokenizer/encoding/o200k_base';
import { wordRanks } from '../embed/tokenize.js';
import { assertLinear } from '../../test/helpers/doubling.js';
import { chunkText, splitSentences } from './chunk.js';
import { extractEntities } from './entities.js';
import { classifyFactType } from './fact-type.js';
import { findDates, parseTemporalQuery } from './temporal.js';
import { keywordTerms, termFrequencies } from './terms.js';
import { countTokens, MAX_RUN, splitByTokens } from './tokens.js';

/**
 * n characters drawn from `alphabet`, a new seed each call: no repeated piece, so the
 * tokenizer's cache of words cannot make a run or a larger input look cheap.
 */
let seeds = 0;
function run(n: number, alphabet: string, seed = ++seeds): string {
  const chars = [...alphabet];
  const out: string[] = [];
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out.push(chars[(x >>> 8) % chars.length]!);
  }
  return out.join('');
}

/** Inputs of n characters, each a shape a quadratic path chokes on. */
const SHAPES: Record<string, (n: number) => string> = {
  'one word': (n) => run(n, 'abcdefghijklmnopqrstuvwxyz'),
  'one capitalised word': (n) => run(n, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'),
  dots: (n) => '.'.repeat(n),
  'punctuation mix': (n) => run(n, '.,;:!?-_=+*#'),
  spaces: (n) => `a${' '.repeat(n)}b`,
  'line breaks': (n) => `${'\n '.repeat(n / 2)}x`,
  digits: (n) => run(n, '0123456789'),
  CJK: (n) => run(n, '漢字日本語中文東京'),
  abbreviations: (n) => 'e.g. '.repeat(n / 5),
  // Runs that never end a sentence: compromise split and tagged them as one (~3× per doubling).
  acronyms: (n) => 'U.S. i.e. '.repeat(n / 10),
  honorifics: (n) => 'Mr. Dr. '.repeat(n / 8),
  initials: (n) => 'J. R. R. '.repeat(n / 9),
  'dotted letters': (n) =>
    run(n / 2, 'abcdefghijklmnopqrstuvwxyz')
      .split('')
      .join('.'),
  'word then comma': (n) => `${run(n, 'abcdefghijklmnopqrstuvwxyz')}, b. c`,
};

const mentioned = new Date('2024-03-15T12:00:00Z');
const vocabulary = { get: (w: string) => (w.length < 6 ? w.length : undefined) };

/**
 * Every text function on the request path, with the smallest size it is tested at: large
 * enough that the quadratic code of before took far longer than the doubling floor.
 */
const FUNCTIONS: [string, (s: string) => unknown, number][] = [
  ['countTokens', countTokens, 20_000],
  ['splitByTokens', (s) => splitByTokens(s, 1000), 20_000],
  // A budget every input here exceeds, so all sizes take the same (cutting) path.
  // Smaller: chunking counts its input several times, and the tokenizer's cache (emptied
  // every 200,000 characters counted) must serve every size alike.
  ['chunkText', (s) => chunkText(s, 200), 8_000],
  ['splitSentences', splitSentences, 20_000],
  ['keywordTerms', keywordTerms, 20_000],
  ['termFrequencies', termFrequencies, 20_000],
  ['wordRanks', (s) => wordRanks(s, vocabulary), 20_000],
  ['classifyFactType', classifyFactType, 20_000],
  ['findDates', (s) => findDates(s, mentioned), 20_000],
  ['parseTemporalQuery', (s) => parseTemporalQuery(s, mentioned), 20_000],
  // compromise is slow per character (linear); 20,000 is a Recall query's limit.
  ['extractEntities', extractEntities, 5_000],
];

describe('text paths are linear in their input', () => {
  for (const [name, fn, n] of FUNCTIONS) {
    test(name, async () => {
      for (const [shape, make] of Object.entries(SHAPES)) {
        await assertLinear(
          `${name} on ${shape}`,
          [n, 2 * n, 4 * n],
          (size) => {
            clearMergeCache();
            return make(size);
          },
          // Only the input: assertLinear also passes the size, which a second parameter
          // (extractEntities' piece length) would take for its own.
          (input) => fn(input),
          // Pure computation in this process: its CPU time, which other processes on a loaded
          // machine do not stretch.
          { runs: 2, clock: 'cpu' },
        );
      }
    });
  }
});

describe('token counting of long runs', () => {
  test('is exact for text without a run longer than MAX_RUN, and close with one', async () => {
    const { countTokens: bpe } = await import('gpt-tokenizer/encoding/o200k_base');
    const plain = `${'Caroline: I went to the LGBTQ support group yesterday, 7 May 2023! '.repeat(300)}${'x'.repeat(MAX_RUN)}`;
    assert.equal(countTokens(plain), bpe(plain));
    for (const run of ['abcdefghij'.repeat(300), 'x9'.repeat(1500), '-'.repeat(3000), ' '.repeat(3000)]) {
      const text = `before ${run} after`;
      const cuts = Math.ceil(run.length / MAX_RUN);
      const ours = countTokens(text);
      const exact = bpe(text);
      // Never under by more than a token per cut; over by at most a few per cut (runs of one
      // symbol have tokens longer than MAX_RUN).
      assert.ok(ours >= exact - cuts && ours <= exact + 2 * cuts, `${ours} vs ${exact} (${cuts} cuts)`);
    }
  });

  test('splitByTokens still gives back the whole text, in pieces within the limit', () => {
    const text = `${'z'.repeat(20_000)} tail`;
    const pieces = splitByTokens(text, 100);
    assert.equal(pieces.join(''), text);
    assert.ok(pieces.every((p) => countTokens(p) <= 100 + 2));
  });
});
