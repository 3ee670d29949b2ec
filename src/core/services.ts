import type { Embedder } from '../embed/embedder.js';
import type { Keyring } from './crypto/keyring.js';
import type { RecallCache } from './recall/cache.js';
import type { RecallResponse } from './recall/response.js';
import type { LanguageModel } from '../llm/model.js';
import type { LimitDefaults, Store } from '../store/store.js';

/**
 * What core needs from the outside world. Built once, fully layered, by the composition root
 * (`src/runtime/compose.ts`) and frozen there: nothing replaces a service afterwards. Core
 * derives narrower views by copying (`{ ...s, store: tx }`), never by assignment.
 */
export interface Services {
  readonly store: Store;
  readonly embedder: Embedder;
  readonly llm: LanguageModel | null;
  /** The clock, injectable for tests. */
  readonly now: () => Date;
  /** Called after an operation is queued, so an in-process worker can start at once. */
  readonly onEnqueue?: () => void;
  /** The master key's keyring (managed encryption); null or absent when none is configured. */
  readonly keyring?: Keyring | null;
  /** Server-wide default project limits (MNEMO_DEFAULT_*); absent means unlimited. */
  readonly limitDefaults?: LimitDefaults;
  /** Recall answers of unchanged banks (MNEMO_RECALL_CACHE_SIZE); absent means none are kept. */
  readonly recallCache?: RecallCache<RecallResponse>;
  /** Webhook targets: private addresses allowed (MNEMO_WEBHOOK_ALLOW_PRIVATE); absent means refused. */
  readonly webhooks?: { readonly allowPrivate: boolean };
}

/**
 * The part of `Services` a core function uses: the store's concerns it reads or writes (`S`, an
 * intersection of the narrow interfaces of `src/store/store.ts`, often a module's alias such as
 * `RecallStore`) and the other services it names (`K`). The compiler keeps a function to what it
 * declares, and a reader sees it in the signature. `Services` is assignable to every `Deps`, so
 * routes, the CLI, MCP and the worker pass theirs unchanged.
 */
export type Deps<S, K extends Exclude<keyof Services, 'store'> = never> = { readonly store: S } & Pick<
  Services,
  K
>;

/**
 * A store that runs `fn` over a read-only snapshot (`Store.readSnapshot`) and hands it a store of
 * the concerns `S` only, so that what runs inside cannot reach further than its caller declared.
 */
export interface Snapshots<S> {
  readSnapshot<T>(fn: (store: S) => Promise<T>): Promise<T>;
}
