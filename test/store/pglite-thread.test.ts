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
import { openPglite } from '../../src/store/pglite.js';
import { crashEngineThread, openPgliteThread } from '../../src/store/pglite-thread.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { migratedTemplate, seedDataDir } from '../helpers/engines.js';
import { loadConfig } from '../../src/config/load.js';
import { compose } from '../../src/runtime/compose.js';
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

  test('a snapshot ends with its last statement (queryLast): the engine is free before its function returns', async () => {
    await db.exec('CREATE TABLE thread_last (id int PRIMARY KEY)');
    await db.query('INSERT INTO thread_last VALUES ($1)', [1]);
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let ended!: () => void;
    const last = new Promise<void>((resolve) => {
      ended = resolve;
    });
    let afterLast: unknown;
    const snapshot = db.transaction(async (q) => {
      const before = await q.query('SELECT count(*)::int AS n FROM thread_last');
      const rows = await q.queryLast!('SELECT id FROM thread_last WHERE id = $1', [1]);
      afterLast = await q.query('SELECT 1').catch((e) => e);
      ended();
      // The function goes on after its last statement: the engine is not held meanwhile.
      await held;
      return { before, rows };
    }, 'snapshot');
    await last;
    const write = db.query('INSERT INTO thread_last VALUES ($1)', [2]);
    const waited = await Promise.race([
      write.then(() => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 5000)),
    ]);
    release();
    assert.equal(waited, false, 'a statement from outside waited for the ended snapshot');
    assert.deepEqual(await snapshot, { before: [{ n: 1 }], rows: [{ id: 1 }] });
    assert.match(String(afterLast), /has ended/);
    // A last statement that fails: the error it has outside a snapshot; the snapshot ended all the same.
    const bad = 'SELECT 1 / $1::int AS x';
    const err = (await db.transaction((q) => q.queryLast!(bad, [0]), 'snapshot').catch((e) => e)) as Error;
    const outside = (await db.query(bad, [0]).catch((e) => e)) as Error;
    assert.ok(err instanceof AppError && outside instanceof AppError, String(err));
    assert.deepEqual([err.code, err.message], [outside.code, outside.message]);
    assert.deepEqual(await db.query('SELECT count(*)::int AS n FROM thread_last'), [{ n: 2 }]);
    // As the first statement too, and only in a snapshot: a write transaction has none.
    assert.deepEqual(
      await db.transaction((q) => q.queryLast!('SELECT count(*)::int AS n FROM thread_last'), 'snapshot'),
      [{ n: 2 }],
    );
    await db.transaction(async (q) => assert.equal(q.queryLast, undefined));
  });

  test('rows read on the main thread equal those the engine in this thread returns, every type', async () => {
    const sql = `SELECT 1::int2 AS i2, 2::int4 AS i4, 3::int8 AS i8, 1.5::float4 AS f4, 2.25::float8 AS f8,
      12.345::numeric AS num, 'x'::text AS t, true AS b, '2026-01-02T03:04:05.678Z'::timestamptz AS ts,
      '2026-01-02'::date AS d, '{"a":[1,2]}'::json AS j, '{"b":null}'::jsonb AS jb, '\\xdeadbeef'::bytea AS by,
      '00000000-0000-0000-0000-000000000001'::uuid AS u, ARRAY['a','b,c']::text[] AS ta, ARRAY[1,2]::int[] AS ia,
      ARRAY['00000000-0000-0000-0000-000000000002']::uuid[] AS ua, ARRAY[0.5,1]::float8[] AS fa,
      '[1,2,3]'::vector AS v, '1 day'::interval AS iv, NULL::text AS n, $1::text AS p`;
    const local = await openPglite(undefined, { template: await migratedTemplate(), cacheMb: TEST_CACHE_MB });
    try {
      // Both with a parameter (a prepared statement) and without (one unnamed exchange).
      assert.deepEqual(await db.query(sql, ['q']), await local.query(sql, ['q']));
      const plain = sql.replace('$1::text', "'q'::text");
      assert.deepEqual(await db.query(plain), await local.query(plain));
    } finally {
      await local.close();
    }
  });

  test('reports its memory, pings, and dumps its data directory', async () => {
    const m = await db.engineMemory!();
    assert.equal(m.cacheBytes, TEST_CACHE_MB * 2 ** 20);
    assert.ok(m.heapBytes > m.cacheBytes);
    await db.ping();
    assert.ok((await db.dumpDataDir!()).size > 0);
  });
});

describe('mnemo serve', () => {
  test('opens the embedded engine on its own thread by default; MNEMO_EMBEDDED_THREAD=false keeps it on the main thread', async () => {
    assert.equal(loadConfig({}, {}).embeddedThread, true);
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-thread-serve-'));
    const started: unknown[] = [];
    const seen = (w: unknown) => started.push(w);
    process.on('worker', seen);
    try {
      await seedDataDir(dir, 'migrated');
      for (const [env, threads] of [
        [{}, 1],
        [{ MNEMO_EMBEDDED_THREAD: 'false' }, 0],
      ] as const) {
        started.length = 0;
        const runtime = await compose(loadConfig({ dataDir: dir }, env));
        try {
          assert.equal(started.length, threads, JSON.stringify(env));
          assert.equal(await runtime.rawStore.getBank('default', 'none'), null);
        } finally {
          await runtime.close();
        }
      }
    } finally {
      process.off('worker', seen);
      rmSync(dir, { recursive: true, force: true });
    }
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
