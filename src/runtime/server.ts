import { type ServerType, serve } from '@hono/node-server';
import type { Logger } from 'pino';
import { type Config, isLoopback } from '../config/load.js';
import { createApp } from '../api/app.js';
import type { Services } from '../core/services.js';
import { compose, type Overrides } from './compose.js';
import { warmTextAnalysis } from '../text/warm.js';

export interface RunningServer {
  url: string;
  services: Services;
  close(): Promise<void>;
}

/**
 * Refuses configurations that would expose an unauthenticated operator surface beyond this
 * machine.
 */
export function checkExposure(config: Config): void {
  if (!config.adminToken && !isLoopback(config.host) && !config.insecureNoAuth) {
    throw new Error(
      `refusing to listen on ${config.host} without MNEMO_ADMIN_TOKEN: /v1/default would be open to the network ` +
        '(set MNEMO_ADMIN_TOKEN, listen on 127.0.0.1, or pass --insecure-no-auth)',
    );
  }
}

/** Composes the services (opening the store unless `overrides` gives one), builds the app and listens. */
export async function startServer(
  config: Config,
  log: Logger,
  overrides: Overrides = {},
): Promise<RunningServer> {
  checkExposure(config);
  const runtime = await compose(config, overrides);
  // One-time costs of the text analyses (pattern compilation, lexicons) before any request or job.
  warmTextAnalysis();
  const worker = config.worker ? runtime.startWorker(log) : null;
  const app = createApp(runtime, log);
  const handlers = inFlight(app.fetch);
  const server: ServerType = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: handlers.fetch, port: config.port, hostname: config.host }, () => resolve(s));
    s.once('error', reject);
  }).catch(async (err: unknown) => {
    await worker?.stop();
    await runtime.close();
    throw err;
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return {
    url: `http://${host}:${port}`,
    services: runtime.services,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      // A request whose client hung up has no socket left to wait for, but may still be running.
      await handlers.settled();
      await worker?.stop();
      await runtime.close();
    },
  };
}

/**
 * A server whose database is gone for good (`Store.lost`: the embedded engine's thread died)
 * would answer 503 to everything until someone restarts it: it closes instead and calls
 * `exit(1)`, so that a supervisor (systemd, Docker's restart policy, Kubernetes) starts it again,
 * which reopens the data directory as after a crash.
 */
export function exitWhenLost(server: RunningServer, log: Logger, exit: (code: number) => void): void {
  void server.services.store.lost?.then(async (why) => {
    log.fatal({ err: why.message }, 'the database is gone; exiting so that mnemo can be started again');
    await server.close().catch(() => {});
    exit(1);
  });
}

/** Wraps a fetch handler so that one can wait for every request it is still handling. */
function inFlight<A extends unknown[], R>(fetch: (...args: A) => R | Promise<R>) {
  const running = new Set<Promise<unknown>>();
  return {
    fetch(...args: A): Promise<R> {
      const p = Promise.resolve().then(() => fetch(...args));
      const tracked = p.catch(() => {}).finally(() => running.delete(tracked));
      running.add(tracked);
      return p;
    },
    settled: async () => {
      await Promise.all([...running]);
    },
  };
}
