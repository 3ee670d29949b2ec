/**
 * The lexical floor the recall benchmarks compare against: Okapi BM25 (k1 1.2, b 0.75) over the
 * same turns the bench retains, stop words removed, no stemming (the reference protocol of
 * ../shared/bench/locomo/README.md). Computed in the bench on the questions it asks, so that a
 * subset run (`--types`, `--limit`, `--samples`) still shows the floor beside mnemo's figures.
 */
import { isStopWord } from '../src/text/terms.js';

const K1 = 1.2;
const B = 0.75;
const WORD = /[\p{L}\p{N}]+/gu;

/** Lower-cased words, stop words and one-letter words out, no stemming. */
export function bm25Tokens(text: string): string[] {
  const out: string[] = [];
  for (const m of text.toLowerCase().matchAll(WORD)) {
    const w = m[0];
    if ((w.length < 2 && !/\d/.test(w)) || isStopWord(w)) continue;
    out.push(w);
  }
  return out;
}

/** An index over one haystack: `rank(query)` gives document keys best first (score > 0 only). */
export class Bm25 {
  private readonly docs: { key: string; tf: Map<string, number>; len: number }[] = [];
  private readonly df = new Map<string, number>();
  private readonly avgLen: number;

  constructor(docs: { key: string; text: string }[]) {
    let total = 0;
    for (const d of docs) {
      const tokens = bm25Tokens(d.text);
      const tf = new Map<string, number>();
      for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const t of tf.keys()) this.df.set(t, (this.df.get(t) ?? 0) + 1);
      this.docs.push({ key: d.key, tf, len: tokens.length });
      total += tokens.length;
    }
    this.avgLen = this.docs.length ? total / this.docs.length : 0;
  }

  /** Document keys by BM25 score of the query, best first; ties keep document order. */
  rank(query: string): string[] {
    const terms = [...new Set(bm25Tokens(query))];
    const n = this.docs.length;
    const idf = new Map(
      terms.map((t) => {
        const df = this.df.get(t) ?? 0;
        return [t, Math.log(1 + (n - df + 0.5) / (df + 0.5))];
      }),
    );
    const scored: { key: string; score: number; i: number }[] = [];
    this.docs.forEach((d, i) => {
      let score = 0;
      for (const t of terms) {
        const f = d.tf.get(t);
        if (!f) continue;
        score += (idf.get(t)! * f * (K1 + 1)) / (f + K1 * (1 - B + (B * d.len) / (this.avgLen || 1)));
      }
      if (score > 0) scored.push({ key: d.key, score, i });
    });
    scored.sort((a, b) => b.score - a.score || a.i - b.i);
    // A key may stand for several documents (a turn cut into chunks): first occurrence wins.
    return [...new Set(scored.map((s) => s.key))];
  }
}
