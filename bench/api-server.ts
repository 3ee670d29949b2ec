/**
 * An in-process mnemo server for a bench that measures through the HTTP API: port 0, a
 * temporary data directory (or a fresh PostgreSQL database), an admin token and no operations
 * worker (the measure is the request, without the observations a consolidation run would add in
 * the background).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../src/api/logger.js';
import { loadConfig } from '../src/config/load.js';
import { type RunningServer, startServer } from '../src/runtime/server.js';
import { createTestDatabase } from '../test/helpers/engines.js';

/** Calls the default project's API; a status past 2xx throws with the body. */
export type ApiCall = (method: string, path: string, body?: unknown) => Promise<any>;

export interface BenchServer {
  server: RunningServer;
  call: ApiCall;
  close(): Promise<void>;
}

export async function benchServer(
  name: string,
  engine: 'pglite' | 'postgres' = 'pglite',
): Promise<BenchServer> {
  const token = `bench-${name}-admin`;
  const dataDir = await mkdtemp(join(tmpdir(), `mnemo-bench-${name}-`));
  const db = engine === 'postgres' ? await createTestDatabase() : null;
  const config = loadConfig(
    {
      port: 0,
      host: '127.0.0.1',
      dataDir,
      databaseUrl: db?.url,
      adminToken: token,
      logLevel: 'silent',
      worker: false,
    },
    {},
  );
  const server = await startServer(config, createLogger('silent'));
  const call: ApiCall = async (method, path, body) => {
    const res = await fetch(`${server.url}/v1/default${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as any;
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  return {
    server,
    call,
    async close() {
      await server.close();
      await db?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Creates `bank` with `config` set before it holds anything: a bank is created by its first
 * Retain, so a placeholder memory creates it and is deleted once the bank is configured (the
 * keyword statistics stay exact).
 */
export async function configuredBank(call: ApiCall, bank: string, config: Record<string, unknown>) {
  const placeholder = await call('POST', `/banks/${bank}/memories`, { items: [{ content: 'placeholder' }] });
  await call('PATCH', `/banks/${bank}/config`, { updates: config });
  await call('DELETE', `/banks/${bank}/memories/${placeholder.memory_ids[0]}`);
}
