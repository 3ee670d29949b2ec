/**
 * A server whose embedded engine's thread died cannot answer again: it closes and exits with 1
 * instead of answering 503 until someone notices, and what it stored before is all there when
 * the data directory is opened again.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createLogger } from '../../src/api/logger.js';
import { loadConfig } from '../../src/config/load.js';
import { exitWhenLost, startServer } from '../../src/runtime/server.js';
import { migrate } from '../../src/store/migrate.js';
import { storeOver } from '../../src/store/open.js';
import { crashEngineThread, openPgliteThread } from '../../src/store/pglite-thread.js';
import { bankPath } from '../helpers/app.js';
import { migratedTemplate, seedDataDir } from '../helpers/engines.js';
import { TEST_CACHE_MB } from '../helpers/pglite-templates.js';

const TOKEN = 'engine-lost-token';

test('a server whose engine thread died closes and exits with 1; its data opens again', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-lost-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  await seedDataDir(dir, 'migrated');
  const db = await openPgliteThread(dir, { cacheMb: TEST_CACHE_MB });
  await migrate(db);
  const config = loadConfig({ port: 0, adminToken: TOKEN, logLevel: 'silent', worker: false }, {});
  const server = await startServer(config, createLogger('silent'), { store: storeOver(db) });
  const call = (path: string, body?: unknown) =>
    fetch(`${server.url}${path}`, {
      method: body ? 'POST' : 'GET',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
  const kept = await call(bankPath('lost', '/memories'), {
    items: [{ content: 'Mira keeps her climbing shoes in the blue locker.' }],
  });
  assert.equal(kept.status, 200);

  let exited: number | undefined;
  const exit = new Promise<number>((resolve) => exitWhenLost(server, createLogger('silent'), resolve));
  void exit.then((code) => {
    exited = code;
  });
  // Alive, the server does not exit.
  assert.equal((await call(bankPath('lost', '/memories/list'))).status, 200);
  assert.equal(exited, undefined);

  await crashEngineThread(db).catch(() => {});
  const bound = new Promise((r) => setTimeout(() => r('still running after 60 s'), 60_000).unref());
  assert.equal(await Promise.race([exit, bound]), 1);
  // Closed: nothing listens any more.
  await assert.rejects(call('/health/live'));

  await db.close();
  // A new start reopens the directory as after a crash: the memory is there.
  const again = await openPgliteThread(dir, { cacheMb: TEST_CACHE_MB });
  try {
    const rows = await again.query<{ text: string }>('SELECT text FROM memories');
    assert.deepEqual(
      rows.map((r) => r.text),
      ['Mira keeps her climbing shoes in the blue locker.'],
    );
  } finally {
    await again.close();
  }
});

test('a closed engine thread is not lost: a server closed on purpose does not exit', async () => {
  const db = await openPgliteThread(undefined, {
    cacheMb: TEST_CACHE_MB,
    template: await migratedTemplate(),
  });
  await migrate(db);
  const config = loadConfig({ port: 0, adminToken: TOKEN, logLevel: 'silent', worker: false }, {});
  const server = await startServer(config, createLogger('silent'), { store: storeOver(db) });
  let exited: number | undefined;
  exitWhenLost(server, createLogger('silent'), (code) => {
    exited = code;
  });
  await server.close();
  await db.close();
  const settled = await Promise.race([
    db.lost!.then(() => 'lost'),
    new Promise((r) => setTimeout(() => r('pending'), 200)),
  ]);
  assert.equal(settled, 'pending');
  assert.equal(exited, undefined);
});
