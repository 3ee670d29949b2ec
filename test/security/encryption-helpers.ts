/**
 * An in-process app with managed encryption over a real store, and ways to read what
 * a database really holds: every file of a PGlite data directory, and for PostgreSQL every row
 * of every table plus the raw pages of every relation and the current WAL segments.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { OpenAPIHono } from '@hono/zod-openapi';
import pg from 'pg';
import { after, before } from 'node:test';
import { createApp } from '../../src/api/app.js';
import type { AppEnv } from '../../src/api/env.js';
import { createLogger } from '../../src/api/logger.js';
import { loadConfig } from '../../src/config/load.js';
import type { Services } from '../../src/core/services.js';
import type { Worker } from '../../src/jobs/worker.js';
import { compose } from '../../src/runtime/compose.js';
import type { Store } from '../../src/store/store.js';
import { type EngineName, openTestDb } from '../helpers/engines.js';
import type { Db } from '../../src/store/db.js';
import { storeOver } from '../../src/store/open.js';

export const ADMIN = 'encryption-admin-token';
export const newMasterKey = () => randomBytes(32).toString('base64');

export interface EncryptedApp {
  app: OpenAPIHono<AppEnv>;
  services: Services;
  /** The store under the encryption layer: what the database holds. */
  raw: Store;
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/**
 * An app over `store` composed with this master key; `worker` runs operations (re-encryption).
 * The store stays the caller's to close.
 */
export async function encryptedApp(
  store: Store,
  masterKey: string,
  opts: { worker?: boolean } = {},
): Promise<EncryptedApp> {
  const config = loadConfig({ adminToken: ADMIN, logLevel: 'silent', masterKey }, {});
  const runtime = await compose(config, { store });
  const log = createLogger('silent');
  const worker: Worker | null = opts.worker === false ? null : runtime.startWorker(log);
  const app = createApp(runtime, log);
  return {
    app,
    services: runtime.services,
    raw: store,
    async call(method, path, body) {
      const res = await app.request(path, {
        method,
        headers: {
          authorization: `Bearer ${ADMIN}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    },
    async close() {
      await worker?.stop();
    },
  };
}

/** Every file under `dir`, read whole. */
export function filesUnder(dir: string): { path: string; bytes: Buffer }[] {
  const out: { path: string; bytes: Buffer }[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push({ path: p, bytes: readFileSync(p) });
    }
  };
  walk(dir);
  return out;
}

/** Which of `needles` occur in any of the blobs (as UTF-8 bytes), with where. */
export function findIn(blobs: { path: string; bytes: Buffer }[], needles: string[]): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const n of needles) {
    const b = Buffer.from(n);
    const where = blobs.filter((x) => x.bytes.includes(b)).map((x) => x.path);
    if (where.length) found.set(n, where);
  }
  return found;
}

/**
 * What a PostgreSQL database holds, read as its superuser: every row of every table as text,
 * the on-disk pages of every table, index and TOAST relation (after a CHECKPOINT), and the
 * newest WAL segments.
 */
export async function postgresContents(url: string): Promise<{ path: string; bytes: Buffer }[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const out: { path: string; bytes: Buffer }[] = [];
    const tables = await client.query<{ name: string }>(
      `SELECT quote_ident(table_name) AS name FROM information_schema.tables
       WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
    );
    for (const t of tables.rows) {
      const rows = await client.query<{ row: string }>(`SELECT x::text AS row FROM ${t.name} x`);
      out.push({ path: `table ${t.name}`, bytes: Buffer.from(rows.rows.map((r) => r.row).join('\n')) });
    }
    await client.query('CHECKPOINT');
    const rels = await client.query<{ name: string; path: string }>(
      `SELECT c.relname AS name, pg_relation_filepath(c.oid) AS path FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname IN ('public', 'pg_toast') AND c.relkind IN ('r', 'i', 't')
         AND pg_relation_filepath(c.oid) IS NOT NULL`,
    );
    for (const r of rels.rows) {
      const file = await client.query<{ bytes: Buffer }>('SELECT pg_read_binary_file($1::text) AS bytes', [
        r.path,
      ]);
      out.push({ path: `relation ${r.name} (${r.path})`, bytes: file.rows[0]?.bytes ?? Buffer.alloc(0) });
    }
    const wal = await client.query<{ name: string }>(
      'SELECT name FROM pg_ls_waldir() ORDER BY modification DESC, name DESC LIMIT 3',
    );
    for (const w of wal.rows) {
      const file = await client.query<{ bytes: Buffer }>('SELECT pg_read_binary_file($1) AS bytes', [
        `pg_wal/${w.name}`,
      ]);
      out.push({ path: `wal ${w.name}`, bytes: file.rows[0]!.bytes });
    }
    return out;
  } finally {
    await client.end();
  }
}

/**
 * `encryptedApp` over a fresh test database of `engine` (`db`, to read what it holds), opened
 * before the suite's tests and closed after them (call inside `describe`); its fields are there
 * once the suite's `before` has run. `worker` runs operations (default: none).
 */
export function encryptedAppForSuite(
  engine: EngineName,
  opts: { worker?: boolean } = {},
): EncryptedApp & { db: Db } {
  const e = {} as EncryptedApp & { db: Db };
  let dispose: (() => Promise<void>) | undefined;
  before(async () => {
    const opened = await openTestDb(engine);
    dispose = opened.dispose;
    e.db = opened.db;
    Object.assign(
      e,
      await encryptedApp(storeOver(opened.db), newMasterKey(), { worker: opts.worker ?? false }),
    );
  });
  after(async () => {
    await e.close?.();
    await dispose?.();
  });
  return e;
}
