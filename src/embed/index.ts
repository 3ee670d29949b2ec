import type { Embedder } from './embedder.js';
import { createLocalEmbedder } from './local.js';
import { createOpenAIEmbedder } from './openai.js';

export type { Embedder } from './embedder.js';
export { LOCAL_EMBEDDER_ID } from './local.js';
export { EmbeddingError } from './openai.js';

/** The embedding settings of the configuration. */
export interface EmbedderConfig {
  /** Where the local embedder keeps its word vector cache. */
  cacheDir: string;
  /** When set, embeddings come from this OpenAI-compatible API instead of the local model. */
  embeddingsUrl?: string | undefined;
  embeddingsModel?: string | undefined;
  embeddingsApiKey?: string | undefined;
  embeddingsDimensions?: number | undefined;
}

/** The configured embedder: the OpenAI-compatible API when `embeddingsUrl` is set, else the local model. */
export function createEmbedder(cfg: EmbedderConfig): Embedder {
  if (!cfg.embeddingsUrl) return createLocalEmbedder({ cacheDir: cfg.cacheDir });
  if (!cfg.embeddingsModel) throw new Error('embeddingsModel is required when embeddingsUrl is set');
  return createOpenAIEmbedder({
    url: cfg.embeddingsUrl,
    model: cfg.embeddingsModel,
    apiKey: cfg.embeddingsApiKey,
    dimensions: cfg.embeddingsDimensions,
  });
}
