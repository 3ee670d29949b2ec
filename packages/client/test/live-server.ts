/**
 * A real mnemo HTTP server on a random loopback port, over a fresh store of the given engine
 * (PGlite in memory, or a PostgreSQL database of its own) with the real local embedder and its
 * operations worker.
 */
import { createLogger } from '../../../src/api/logger.js';
import { loadConfig } from '../../../src/config/load.js';
import type { Services } from '../../../src/core/services.js';
import { startServer } from '../../../src/runtime/server.js';
import type { Store } from '../../../src/store/store.js';
import { type EngineName, openTestStore } from '../../../test/helpers/engines.js';

export const ADMIN_TOKEN = 'sdk-test-admin-token';

export interface LiveServer {
  url: string;
  services: Services;
  /**
   * Keeps the worker from taking queued operations, so they stay pending (to cancel one), until
   * the function returned is called: one server serves the tests with and without a worker.
   */
  holdOperations(): () => void;
  close(): Promise<void>;
}

export async function startLiveServer(engine: EngineName): Promise<LiveServer> {
  const config = loadConfig({ port: 0, logLevel: 'silent', adminToken: ADMIN_TOKEN, worker: true }, {});
  const store = await openTestStore(engine);
  let held = 0;
  // The worker claims through the store: while held, there is nothing to claim.
  const gated: Store = {
    ...store,
    claimOperation: (...args) => (held > 0 ? Promise.resolve(null) : store.claimOperation(...args)),
  };
  const server = await startServer(config, createLogger('silent'), { store: gated });
  return {
    url: server.url,
    services: server.services,
    holdOperations() {
      held++;
      let released = false;
      return () => {
        if (!released) held--;
        released = true;
      };
    },
    async close() {
      await server.close();
      await store.dispose();
    },
  };
}
