/**
 * Smooth inverse frequency (Arora, Liang and Ma, 2017) for vocabularies known only by frequency rank.
 * Changing a constant here changes the vector space: bump the cache and embedder versions with it.
 */

/**
 * The SIF smoothing parameter a. With a = 3e-4 "the" weighs 0.004, a rank-100 word 0.3 and a rank-10000
 * word 0.98. Of 1e-2 to 1e-4, it ranked 50 paraphrase pairs best, tied with 1e-4.
 */
export const SIF_A = 3e-4;

/** Words per sentence assumed when estimating the common component; the result barely depends on it. */
const SENTENCE_WORDS = 10;
const MAX_ITERATIONS = 20;
/** Stop once an iteration moves the direction less than this (1 − cosine). */
const CONVERGED = 1e-8;

/**
 * SIF weight a / (a + p(w)) of every rank, with p(w) from Zipf's law: the word of rank r (0-based)
 * has probability 1 / ((r + 1) H), H the harmonic number of the vocabulary size.
 */
export function sifWeights(count: number): Float32Array {
  const weights = new Float32Array(count);
  const harmonic = harmonicNumber(count);
  for (let r = 0; r < count; r++) weights[r] = SIF_A / (SIF_A + zipf(r, harmonic));
  return weights;
}

function harmonicNumber(n: number): number {
  return Math.log(n) + 0.5772156649;
}

function zipf(rank: number, harmonic: number): number {
  return 1 / ((rank + 1) * harmonic);
}

/**
 * The direction SIF removes from every sentence vector (the first singular vector of a corpus of sentence
 * vectors). Without a corpus, it is taken from the model itself: the top eigenvector of the second moment
 * E[s sᵀ] of the SIF sum s of `SENTENCE_WORDS` words drawn by Zipf frequency, that is
 * μμᵀ + (C − μμᵀ) / n with μ = Σ p w v and C = Σ p w² v vᵀ. The eigengap is wide (the second eigenvalue
 * is about 5 % of the first), so a handful of power iterations settle it. Returns a unit vector.
 */
export function commonComponent(
  vectors: { codes: Int8Array; scales: Float32Array; dimensions: number },
  weights: Float32Array,
): Float32Array {
  const { codes, scales, dimensions: dims } = vectors;
  const count = scales.length;
  const harmonic = harmonicNumber(count);
  const mean = new Float64Array(dims);
  for (let r = 0; r < count; r++) {
    const f = zipf(r, harmonic) * weights[r]! * scales[r]!;
    for (let d = 0, i = r * dims; d < dims; d++, i++) mean[d]! += f * codes[i]!;
  }
  // Power iteration on M x = μ(μ·x)(1 − 1/n) + (C x) / n, without ever forming C.
  let x = Float64Array.from(mean);
  normalizeInPlace(x);
  for (let iteration = 0; iteration < MAX_ITERATIONS; iteration++) {
    const next = new Float64Array(dims);
    for (let r = 0; r < count; r++) {
      const f = weights[r]! * scales[r]!;
      let dot = 0;
      for (let d = 0, i = r * dims; d < dims; d++, i++) dot += codes[i]! * x[d]!;
      const g = (zipf(r, harmonic) * f * f * dot) / SENTENCE_WORDS;
      for (let d = 0, i = r * dims; d < dims; d++, i++) next[d]! += g * codes[i]!;
    }
    const meanDot = dot64(mean, x) * (1 - 1 / SENTENCE_WORDS);
    for (let d = 0; d < dims; d++) next[d]! += mean[d]! * meanDot;
    normalizeInPlace(next);
    const moved = 1 - dot64(next, x);
    x = next;
    if (moved < CONVERGED) break;
  }
  return Float32Array.from(x);
}

function dot64(a: Float64Array, b: Float64Array): number {
  let sum = 0;
  for (let d = 0; d < a.length; d++) sum += a[d]! * b[d]!;
  return sum;
}

function normalizeInPlace(v: Float64Array): void {
  const norm = Math.sqrt(dot64(v, v));
  for (let d = 0; d < v.length; d++) v[d]! /= norm;
}
