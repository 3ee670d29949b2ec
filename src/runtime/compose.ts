/**
 * The composition root: the one place where configuration becomes services. `mnemo serve`,
 * `mnemo worker`, `mnemo mcp` (stdio) and the tests' `testApp` all build through `compose`, so
 * every one of them runs with the same layers: the encryption layer over the store, metered
 * embedder and model, the server-wide limit defaults and the Recall cache.
 */
import type { Logger } from 'pino';
import type { AppRuntime } from '../api/app.js';
import { limitDefaults } from '../api/limits.js';
import { createMetrics, type Metrics, timedEmbedder, timedModel } from '../api/metrics.js';
import type { Config } from '../config/load.js';
import { encryptingStore } from '../core/crypto/encrypting-store.js';
import { Keyring } from '../core/crypto/keyring.js';
import { verifyMasterKey } from '../core/crypto/setup.js';
import { VectorCache } from '../core/crypto/vector-cache.js';
import { enqueueOperation } from '../core/operations.js';
import { RecallCache } from '../core/recall/cache.js';
import type { Services } from '../core/services.js';
import { createEmbedder, type Embedder } from '../embed/index.js';
import { OPERATION_RUNNERS } from '../jobs/kinds.js';
import { type DelivererOptions, startDeliverer } from '../jobs/webhooks.js';
import { startWorker, type Worker, type WorkerOptions } from '../jobs/worker.js';
import { createLanguageModel } from '../llm/index.js';
import type { LanguageModel } from '../llm/model.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/store.js';

/**
 * What a caller may supply instead of what the configuration names (tests: a store of their
 * engine, a clock, a fake provider). Everything supplied still gets the production layers.
 */
export interface Overrides {
  /** An open, migrated store; it stays the caller's to close. */
  store?: Store;
  now?: () => Date;
  embedder?: Embedder;
  llm?: LanguageModel | null;
}

/** One process's services, built once and never changed; `createApp` serves one. */
export interface Runtime extends AppRuntime {
  /** Every service with its layers, frozen. */
  readonly services: Services;
  /** The store under the encryption layer: what the database holds. */
  readonly rawStore: Store;
  /** This runtime's Prometheus registry (the embedder and model are timed into it). */
  readonly metrics: Metrics;
  /**
   * Starts an operations worker over these services, with the webhook deliverer beside it;
   * operations and deliveries queued in this process wake them at once. Stop it before `close`.
   */
  startWorker(log: Logger, opts?: Partial<WorkerOptions> & { webhooks?: Partial<DelivererOptions> }): Worker;
  /** Closes the store, when `compose` opened it. */
  close(): Promise<void>;
}

/** The process's Recall answer cache, unless `MNEMO_RECALL_CACHE_SIZE` is 0. */
function recallCache(config: Config): Services['recallCache'] {
  if (config.recallCacheSize === 0) return undefined;
  return new RecallCache(config.recallCacheSize, config.recallCacheTtlSeconds * 1000);
}

/**
 * Builds every service from `config` (and `overrides`). A missing or wrong master key when
 * encrypted banks exist rejects, and a store opened here is closed again.
 */
export async function compose(config: Config, overrides: Overrides = {}): Promise<Runtime> {
  const keyring = Keyring.fromConfig(config.masterKey);
  const owned = !overrides.store;
  const rawStore =
    overrides.store ??
    (await openStore({
      databaseUrl: config.databaseUrl,
      dataDir: config.databaseUrl ? undefined : config.dataDir,
      poolSize: config.databasePoolSize,
      embeddedCacheMb: config.embeddedCacheMb,
      embeddedThread: config.embeddedThread,
      keywordCacheMb: config.keywordCacheMb,
    }));
  try {
    // A missing or wrong master key stops the start when encrypted banks exist.
    await verifyMasterKey(rawStore, keyring);
    const embedder = overrides.embedder ?? createEmbedder(config);
    const llm =
      overrides.llm !== undefined
        ? overrides.llm
        : createLanguageModel({
            provider: config.llmProvider,
            baseUrl: config.llmBaseUrl,
            model: config.llmModel,
            apiKey: config.llmApiKey,
          });
    // Workers of this process, woken when an operation is queued here.
    const wakers = new Set<() => void>();
    const store = encryptingStore(
      rawStore,
      keyring,
      {
        // Switching a bank's encryption queues the operation that converts its rows.
        onSwitch: async (projectId, bankId) => {
          await enqueueOperation(services, projectId, bankId, 'reencrypt', {});
        },
      },
      { vectors: new VectorCache(config.vectorCacheMb * 2 ** 20) },
    );
    const metrics = createMetrics(store);
    const services: Services = Object.freeze({
      store,
      embedder: timedEmbedder(embedder, metrics),
      llm: llm && timedModel(llm, metrics),
      now: overrides.now ?? (() => new Date()),
      keyring,
      // A worker-only process (`mnemo worker`) charges jobs against the same defaults.
      limitDefaults: limitDefaults(config),
      recallCache: recallCache(config),
      webhooks: Object.freeze({ allowPrivate: config.webhookAllowPrivate }),
      onEnqueue: () => {
        for (const wake of wakers) wake();
      },
    });
    return Object.freeze({
      config,
      services,
      rawStore,
      metrics,
      startWorker(
        log: Logger,
        opts: Partial<WorkerOptions> & { webhooks?: Partial<DelivererOptions> } = {},
      ): Worker {
        const { webhooks, ...workerOpts } = opts;
        const worker = startWorker(services, log, { runners: OPERATION_RUNNERS, ...workerOpts });
        const deliverer = startDeliverer(services, log, {
          allowPrivate: config.webhookAllowPrivate,
          ...webhooks,
        });
        const wake = () => {
          worker.kick();
          deliverer.kick();
        };
        wakers.add(wake);
        return {
          id: worker.id,
          kick: wake,
          async stop() {
            wakers.delete(wake);
            await Promise.all([worker.stop(), deliverer.stop()]);
          },
        };
      },
      async close() {
        if (owned) await rawStore.close();
      },
    });
  } catch (err) {
    if (owned) await rawStore.close();
    throw err;
  }
}
