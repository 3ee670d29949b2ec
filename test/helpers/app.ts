/**
 * An in-process mnemo app over a real store (PGlite in memory, or a fresh PostgreSQL database)
 * with the real local embedder. Requests go through the app's fetch handler: the whole HTTP
 * stack (routing, validation, auth, errors) without a socket.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { createApp, recallCache } from '../../src/api/app.js';
import { attachWorker } from '../../src/api/server.js';
import type { AppEnv } from '../../src/api/env.js';
import { createLogger } from '../../src/api/logger.js';
import { loadConfig, type ConfigInput } from '../../src/config/load.js';
import type { Services } from '../../src/core/services.js';
import { createEmbedder } from '../../src/embed/index.js';
import type { Store } from '../../src/store/store.js';
import { type EngineName, openTestStore } from './engines.js';

export const ADMIN = 'test-admin-token';

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
}

export interface TestApp {
  app: OpenAPIHono<AppEnv>;
  services: Services;
  /** JSON request; `token` defaults to the operator token. Pass `token: null` for none. */
  call(
    method: string,
    path: string,
    opts?: { body?: unknown; rawBody?: string; token?: string | null; headers?: Record<string, string> },
  ): Promise<TestResponse>;
  close(): Promise<void>;
}

export async function testApp(
  engine: EngineName,
  options: ConfigInput & {
    now?: () => Date;
    runWorker?: boolean;
    /** A store opened by the test (closed with the app); by default a fresh one of the engine. */
    store?: Store;
  } = {},
): Promise<TestApp> {
  const { now, runWorker, store: given, ...cfg } = options;
  const config = loadConfig({ adminToken: ADMIN, logLevel: 'silent', ...cfg }, {});
  const store = given ? Object.assign(given, { dispose: () => given.close() }) : await openTestStore(engine);
  const services: Services = {
    store,
    embedder: createEmbedder({ cacheDir: config.cacheDir }),
    llm: null,
    now: now ?? (() => new Date()),
    recallCache: recallCache(config),
  };
  const log = createLogger('silent');
  const worker = runWorker ? attachWorker(services, log) : null;
  const app = createApp(services, config, log);
  return {
    app,
    services,
    async call(method, path, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      const token = opts.token === undefined ? ADMIN : opts.token;
      if (token) headers.authorization = `Bearer ${token}`;
      let body: string | undefined;
      if (opts.rawBody !== undefined) body = opts.rawBody;
      else if (opts.body !== undefined) {
        body = JSON.stringify(opts.body);
        headers['content-type'] ??= 'application/json';
      }
      if (body !== undefined) headers['content-length'] ??= String(Buffer.byteLength(body));
      const res = await app.request(path, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {}
      return { status: res.status, headers: res.headers, body: parsed };
    },
    async close() {
      await worker?.stop();
      await store.dispose();
    },
  };
}

/** `/v1/default/banks/<encoded bank><rest>` */
export const bankPath = (bank: string, rest = '', base = '/v1/default') =>
  `${base}/banks/${encodeURIComponent(bank)}${rest}`;
