/**
 * A real mnemo HTTP server on a random loopback port, over a fresh store of the given engine
 * (PGlite in memory, or a PostgreSQL database of its own) with the real local embedder.
 */
import { createLogger } from '../../../src/api/logger.js';
import { startServer } from '../../../src/runtime/server.js';
import { loadConfig } from '../../../src/config/load.js';
import type { Services } from '../../../src/core/services.js';
import { type EngineName, openTestStore } from '../../../test/helpers/engines.js';

export const ADMIN_TOKEN = 'sdk-test-admin-token';

export interface LiveServer {
  url: string;
  services: Services;
  close(): Promise<void>;
}

/** `worker: false` leaves queued operations pending (to cancel them). */
export async function startLiveServer(
  engine: EngineName,
  opts: { worker?: boolean } = {},
): Promise<LiveServer> {
  const config = loadConfig(
    { port: 0, logLevel: 'silent', adminToken: ADMIN_TOKEN, worker: opts.worker ?? true },
    {},
  );
  const store = await openTestStore(engine);
  const server = await startServer(config, createLogger('silent'), { store });
  return {
    url: server.url,
    services: server.services,
    async close() {
      await server.close();
      await store.dispose();
    },
  };
}
