/**
 * Turns text into vectors. Every implementation returns unit-length vectors so that cosine
 * distance and inner product agree.
 */
export interface Embedder {
  /** Identity of the vector space, recorded per bank ("local:glove-sif-100d:v1", "openai:<model>:<dims>"). */
  readonly id: string;
  readonly dimensions: number;
  /** One vector per text, in order. */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
}
