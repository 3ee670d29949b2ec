import type { Embedder } from '../embed/embedder.js';
import type { Keyring } from './crypto/keyring.js';
import type { RecallCache } from './recall/cache.js';
import type { RecallResponse } from './recall/response.js';
import type { LanguageModel } from '../llm/model.js';
import type { LimitDefaults, Store } from '../store/store.js';

/** What core needs from the outside world; wired once in api/app.ts. */
export interface Services {
  store: Store;
  embedder: Embedder;
  llm: LanguageModel | null;
  /** The clock, injectable for tests. */
  now(): Date;
  /** Called after an operation is queued, so an in-process worker can start at once. */
  onEnqueue?: () => void;
  /** The master key's keyring (managed encryption); null or absent when none is configured. */
  keyring?: Keyring | null;
  /** Server-wide default project limits (MNEMO_DEFAULT_*); absent means unlimited. */
  limitDefaults?: LimitDefaults;
  /** Recall answers of unchanged banks (MNEMO_RECALL_CACHE_SIZE); absent means none are kept. */
  recallCache?: RecallCache<RecallResponse>;
}
