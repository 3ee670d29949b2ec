/**
 * The embedded engine on its own thread (src/store/pglite-thread.ts): the same `Db` as the
 * engine in the main thread, its errors the same to the callers that map them, and a thread
 * that dies failing calls instead of leaving them waiting.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { AppError } from '../../src/contract/errors.js';
import type { Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { storeOver } from '../../src/store/open.js';
import { crashEngineThread, openPgliteThread } from '../../src/store/pglite-thread.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { migratedTemplate } from '../helpers/engines.js';
import { TEST_CACHE_MB } from '../helpers/pglite-templates.js';

const openThread = async () => {
  const db = await openPgliteThread(undefined, {
    template: await migratedTemplate(),
    cacheMb: TEST_CACHE_MB,
  });
  await migrate(db);
  return db;
};

describe('the embedded engine on its own thread', () => {
  let db: Db;
  let t: TestApp;
  before(async () => {
    db = await openThread();
    t = await testApp('pglite', { store: storeOver(db) });
  });
  after(() => t.close());

  test('retains and recalls through the app', async () => {
    const bank = 'threaded';
    const r = await t.call('POST', bankPath(bank, '/memories'), {
      body: {
        items: [
          { content: 'Melanie painted a sunrise over the lake last weekend.' },
          { content: 'Caroline is researching adoption agencies.' },
        ],
      },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const found = await t.call('POST', bankPath(bank, '/memories/recall'), {
      body: { query: 'What did Melanie paint?' },
    });
    assert.equal(found.status, 200);
    assert.equal(found.body.results[0].text, 'Melanie painted a sunrise over the lake last weekend.');
  });

  test('a value the engine cannot store is a clean 400, as in the main thread', async () => {
    const r = await t.call('POST', bankPath('threaded-bad', '/memories'), {
      body: { items: [{ content: 'fine', timestamp: '99999-01-01T00:00:00Z' }] },
    });
    assert.equal(r.status, 400, JSON.stringify(r.body));
    const nul = await db.query('SELECT $1::int AS n', ['not a number']).catch((e: unknown) => e);
    assert.ok(!(nul instanceof AppError) || nul.code === 'validation_error', String(nul));
    assert.equal((nul as { code?: string }).code, 'validation_error');
  });

  test('a constraint error keeps its SQLSTATE and fields; a transaction rolls back', async () => {
    await db.exec('CREATE TABLE thread_t (id int PRIMARY KEY, v text)');
    await db.query('INSERT INTO thread_t VALUES ($1, $2)', [1, 'a']);
    const dup = (await db.query('INSERT INTO thread_t VALUES ($1, $2)', [1, 'b']).catch((e) => e)) as {
      code?: string;
      constraint?: string;
      message: string;
    };
    assert.equal(dup.code, '23505');
    assert.equal(dup.constraint, 'thread_t_pkey');
    assert.match(dup.message, /duplicate key/);

    const boom = new Error('changed my mind');
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.query('INSERT INTO thread_t VALUES ($1, $2)', [2, 'c']);
        assert.equal((await tx.query('SELECT count(*)::int AS n FROM thread_t')).length, 1);
        throw boom;
      }),
      (err) => err === boom,
    );
    const committed = await db.transaction(async (tx) => {
      await tx.query('INSERT INTO thread_t VALUES ($1, $2)', [3, 'd']);
      return 'done';
    });
    assert.equal(committed, 'done');
    assert.deepEqual(await db.query('SELECT id FROM thread_t ORDER BY id'), [{ id: 1 }, { id: 3 }]);
    // A statement from outside waits for the transaction in progress: it never sees its rows.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => {
      inside = resolve;
    });
    const tx = db.transaction(async (q) => {
      await q.query('INSERT INTO thread_t VALUES ($1, $2)', [4, 'e']);
      inside();
      await held;
      throw new Error('undo');
    });
    await entered;
    const outside = db.query('SELECT count(*)::int AS n FROM thread_t');
    release();
    await assert.rejects(tx, /undo/);
    assert.deepEqual(await outside, [{ n: 2 }]);
  });

  test('reports its memory, pings, and dumps its data directory', async () => {
    const m = await db.engineMemory!();
    assert.equal(m.cacheBytes, TEST_CACHE_MB * 2 ** 20);
    assert.ok(m.heapBytes > m.cacheBytes);
    await db.ping();
    assert.ok((await db.dumpDataDir!()).size > 0);
  });
});

describe('the engine thread ends', () => {
  test('a crashed thread fails its pending and later calls as unavailable', async () => {
    const db = await openThread();
    const pending = db.query('SELECT pg_sleep(0.2)');
    const crash = crashEngineThread(db);
    const unavailable = (err: unknown) =>
      err instanceof AppError && err.code === 'unavailable' && /thread stopped/.test(err.message);
    await assert.rejects(crash, unavailable);
    await assert.rejects(
      pending.then(() => db.query('SELECT 1')),
      unavailable,
    );
    await assert.rejects(db.query('SELECT 1'), unavailable);
    await db.close();
  });

  test('closed, it refuses calls', async () => {
    const db = await openThread();
    await db.close();
    await assert.rejects(
      db.query('SELECT 1'),
      (err) => err instanceof AppError && err.code === 'unavailable',
    );
  });

  test('a damaged data directory is refused with the same error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-thread-'));
    try {
      mkdirSync(join(dir, 'pgdata'));
      writeFileSync(join(dir, 'pgdata', 'base'), 'x');
      await assert.rejects(
        openPgliteThread(dir),
        (err) =>
          err instanceof AppError &&
          err.code === 'unavailable' &&
          /holds database files but no PG_VERSION/.test(err.message),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a process that opens and closes it exits by itself', async () => {
    const script = `
      const { openPgliteThread } = await import(${JSON.stringify(new URL('../../src/store/pglite-thread.ts', import.meta.url).href)});
      const db = await openPgliteThread();
      const [row] = await db.query('SELECT 40 + $1::int AS n', [2]);
      await db.close();
      console.log(row.n);`;
    const args = ['--import=tsx', '--input-type=module', '-e', script];
    const { stdout } = await promisify(execFile)(process.execPath, args);
    assert.equal(stdout.trim(), '42');
  });
});
