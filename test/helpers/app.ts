/**
 * An in-process mnemo app over a real store (PGlite in memory, or a fresh PostgreSQL database)
 * with the real local embedder. Requests go through the app's fetch handler: the whole HTTP
 * stack (routing, validation, auth, errors) without a socket. The services are built by the
 * composition root, as `mnemo serve` builds them: the encryption layer over the store (with a
 * keyring when `masterKey` is given, as in production), metered embedder and model, limit
 * defaults, Recall cache.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { createApp } from '../../src/api/app.js';
import type { AppEnv } from '../../src/api/env.js';
import { createLogger } from '../../src/api/logger.js';
import { loadConfig, type ConfigInput } from '../../src/config/load.js';
import type { Services } from '../../src/core/services.js';
import { compose, type Overrides, type Runtime } from '../../src/runtime/compose.js';
import type { Db } from '../../src/store/db.js';
import { storeOver } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { type EngineName, openTestDb, openTestStore } from './engines.js';

export const ADMIN = 'test-admin-token';

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
}

export interface TestApp {
  app: OpenAPIHono<AppEnv>;
  runtime: Runtime;
  /** `runtime.services`: frozen, the store behind the encryption layer. */
  services: Services;
  /** The store under the encryption layer: what the database holds. */
  raw: Store;
  /** JSON request; `token` defaults to the operator token. Pass `token: null` for none. */
  call(
    method: string,
    path: string,
    opts?: { body?: unknown; rawBody?: string; token?: string | null; headers?: Record<string, string> },
  ): Promise<TestResponse>;
  /**
   * A second app over the same database, built afresh from this one's configuration and these
   * overrides: the server restarted with another model or embedder. Closed with this one.
   */
  reconfigured(overrides: Omit<TestAppOptions, 'store'>): Promise<TestApp>;
  close(): Promise<void>;
}

export type TestAppOptions = ConfigInput &
  Omit<Overrides, 'store'> & {
    runWorker?: boolean;
    /**
     * A store opened by the test, closed with the app (by its `dispose` when it has one, which
     * may also drop its database); by default a fresh one of the engine.
     */
    store?: Store & { dispose?: () => Promise<void> };
  };

export async function testApp(engine: EngineName, options: TestAppOptions = {}): Promise<TestApp> {
  const given = options.store;
  const store = given
    ? Object.assign(given, { dispose: given.dispose ?? (() => given.close()) })
    : await openTestStore(engine);
  try {
    return await appOver(store, options, () => store.dispose());
  } catch (err) {
    await store.dispose();
    throw err;
  }
}

/** `testApp` over a fresh database of the engine, with that database, for tests that read or change its rows. */
export async function testAppWithDb(
  engine: EngineName,
  options: Omit<TestAppOptions, 'store'> = {},
): Promise<{ t: TestApp; db: Db }> {
  const { db, dispose } = await openTestDb(engine);
  return { t: await testApp(engine, { ...options, store: Object.assign(storeOver(db), { dispose }) }), db };
}

async function appOver(
  store: Store,
  options: TestAppOptions,
  dispose: () => Promise<void>,
): Promise<TestApp> {
  const { now, embedder, llm, runWorker, store: _, ...cfg } = options;
  const config = loadConfig({ adminToken: ADMIN, logLevel: 'silent', ...cfg }, {});
  const runtime = await compose(config, { store, now, embedder, llm });
  const log = createLogger('silent');
  const worker = runWorker ? runtime.startWorker(log) : null;
  const app = createApp(runtime, log);
  const others: TestApp[] = [];
  return {
    app,
    runtime,
    services: runtime.services,
    raw: store,
    async reconfigured(overrides) {
      const other = await appOver(store, { ...options, ...overrides }, async () => {});
      others.push(other);
      return other;
    },
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
      for (const o of others) await o.close();
      await worker?.stop();
      await runtime.close();
      await dispose();
    },
  };
}

/** `/v1/default/banks/<encoded bank><rest>` */
export const bankPath = (bank: string, rest = '', base = '/v1/default') =>
  `${base}/banks/${encodeURIComponent(bank)}${rest}`;
