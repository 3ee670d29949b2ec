/**
 * A `mnemo serve` over a real socket (the Node adapter, as in production) on the embedded
 * engine, started before a file's tests and closed after them, with the operator's token.
 */
import { after, before } from 'node:test';
import { createLogger } from '../../src/api/logger.js';
import { loadConfig } from '../../src/config/load.js';
import { type RunningServer, startServer } from '../../src/runtime/server.js';
import { openTestStore } from './engines.js';

/** Registers the server's start and stop; `url()` is its address once started. */
export function socketServer(adminToken: string): { url(): string } {
  let server: RunningServer;
  let store: Awaited<ReturnType<typeof openTestStore>>;
  before(async () => {
    store = await openTestStore('pglite');
    const config = loadConfig({ port: 0, adminToken, logLevel: 'silent', worker: false }, {});
    server = await startServer(config, createLogger('silent'), { store });
  });
  after(async () => {
    await server.close();
    await store.dispose();
  });
  return { url: () => server.url };
}
