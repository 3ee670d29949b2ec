import { irregularBase, isStopWord, keywordTerms } from './terms.js';
import { type HypernymOptions, hypernymWords } from './wordnet.js';

const memo = new Map<string, string[]>();

/** Keyword terms of the hypernyms of a text's words that the text does not hold, each at `weight`. */
export function hypernymTerms(text: string, opts: HypernymOptions & { weight: number }): Map<string, number> {
  const out = new Map<string, number>();
  const own = new Set(keywordTerms(text));
  for (const m of text.toLowerCase().matchAll(/[a-z]+/g)) {
    const w = m[0];
    if (w.length < 3 || isStopWord(w)) continue;
    let terms = memo.get(w);
    if (!terms) {
      terms = [...new Set(hypernymWords(w, opts, irregularBase).flatMap((h) => keywordTerms(h)))];
      memo.set(w, terms);
    }
    for (const t of terms) if (!own.has(t)) out.set(t, opts.weight);
  }
  return out;
}
