import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_buffercache } from '@electric-sql/pglite/contrib/pg_buffercache';
import { vector } from '@electric-sql/pglite-pgvector';
import { AppError } from '../contract/errors.js';
import type { Db, EngineMemory, Queryable } from './db.js';
import { inputError } from './input-errors.js';
import { preparedStatements } from './pglite-prepared.js';
import { checkFence } from './fence.js';
import { priorityGate } from './priority.js';

/**
 * Takes the data directory for this process. PGlite is single-process: a second mnemo on the
 * same directory would corrupt it, so it must refuse instead. The lock file holds the pid; a
 * lock left by a dead process is taken over.
 */
function lockDataDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const lock = join(dir, 'mnemo.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lock, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lock, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(lock, 'utf8'));
      if (pid && pid !== process.pid && isAlive(pid)) {
        throw new AppError(
          'unavailable',
          `data directory ${dir} is in use by another mnemo process (pid ${pid}); ` +
            'the embedded database belongs to one process — use MNEMO_DATABASE_URL (PostgreSQL) to share data',
        );
      }
      rmSync(lock, { force: true });
    }
  }
  throw new AppError('unavailable', `could not lock data directory ${dir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Written once the database in a data directory was created: its files must be there from then on. */
const CREATED = 'mnemo.created';

/**
 * PGlite initialises a new database wherever it finds no PG_VERSION, over whatever files are
 * left. A directory that held a database (files present, or our marker) but lacks it is damaged:
 * refuse instead of silently starting empty.
 */
function refuseDamaged(dir: string, damaged: (cause: string) => AppError): void {
  const pgdata = join(dir, 'pgdata');
  const files = existsSync(pgdata) ? readdirSync(pgdata) : [];
  if (files.includes('PG_VERSION')) return;
  if (files.length > 0) throw damaged(`${pgdata} holds database files but no PG_VERSION`);
  if (existsSync(join(dir, CREATED))) throw damaged(`the database files in ${pgdata} are missing`);
}

/**
 * Opens the embedded engine. `dataDir` undefined means in memory (tests). `cacheMb`: its shared
 * buffers. With PGlite's default of 128 MB a 100k bank's vector index, rows and hot postings do
 * not fit, and every page read past the cache is a file read through the WebAssembly file layer
 * (~4 ms of a ~30 ms Recall at 100k); 256 MB holds them.
 * `template`: a data directory tarball (`dumpDataDir` of another PGlite) the database starts
 * from instead of an empty one — the tests' migrated snapshot (test/helpers/engines.ts).
 * `unread`: statements' rows come back unread, as one `AnswerBytes` (`pglite-prepared.ts`): the
 * engine's thread sends them so (`pglite-thread-worker.ts`).
 */
export async function openPglite(
  dataDir?: string,
  opts: { cacheMb?: number; template?: Blob; unread?: boolean } = {},
): Promise<Db> {
  const unlock = dataDir ? lockDataDir(dataDir) : () => {};
  const damaged = (cause: string) =>
    new AppError(
      'unavailable',
      `cannot open the embedded database in ${dataDir}: ${cause}. ` +
        'If the directory is damaged, move it aside and restore from an export (mnemo import).',
    );
  let pg: PGlite;
  try {
    if (dataDir) refuseDamaged(dataDir, damaged);
    pg = await PGlite.create({
      dataDir: dataDir ? join(dataDir, 'pgdata') : undefined,
      extensions: { vector, pg_buffercache },
      loadDataDir: opts.template,
      startParams: [
        ...PGlite.defaultStartParams,
        // A new 16 MB WAL segment was written full of zeros first, inside whichever statement
        // crossed into it: 70–100 ms with the event loop held, every 16 MB written. PGlite runs
        // without fsync already; the segment is extended instead (as on copy-on-write file systems).
        '-c',
        'wal_init_zero=off',
        ...(opts.cacheMb ? ['-c', `shared_buffers=${opts.cacheMb}MB`] : []),
      ],
    });
    // Reads how much of the page cache is in use (engineMemory).
    await pg.exec('CREATE EXTENSION IF NOT EXISTS pg_buffercache');
    if (dataDir && !existsSync(join(dataDir, CREATED)))
      writeFileSync(join(dataDir, CREATED), `${new Date().toISOString()}\n`);
  } catch (err) {
    unlock();
    throw err instanceof AppError ? err : damaged((err as Error).message);
  }
  const prepared = preparedStatements(pg, opts.unread);
  const wrap = (q: Pick<PGlite, 'query' | 'exec'>, inTransaction: boolean): Queryable => ({
    async query<T>(sql: string, params?: unknown[]) {
      const plain = async () => (await q.query<T>(sql, params)).rows;
      try {
        return await prepared(sql, params ?? [], plain, inTransaction);
      } catch (err) {
        throw inputError(err) ?? err;
      }
    },
    async exec(sql: string) {
      await q.exec(sql);
    },
  });
  // One statement runs at a time for everyone: requests' statements go before background work.
  const gate = priorityGate();
  const top = wrap(pg, false);
  return {
    engine: 'pglite',
    query: (sql, params) => gate(() => top.query(sql, params)),
    exec: (sql) => gate(() => top.exec(sql)),
    transaction: (fn, mode) =>
      gate(() =>
        pg.transaction(async (tx) => {
          const q = wrap(tx, true);
          // A job's write checks first that its bank was not deleted meanwhile (store/fence.ts).
          if (mode !== 'snapshot') await checkFence(q);
          return fn(q);
        }),
      ),
    async ping() {
      await pg.query('SELECT 1');
    },
    engineMemory: () => gate(() => engineMemory(pg)),
    dumpDataDir: () => gate(() => pg.dumpDataDir('none')),
    async close() {
      try {
        await pg.close();
      } finally {
        unlock();
      }
    },
  };
}

async function engineMemory(pg: PGlite): Promise<EngineMemory> {
  const [row] = (
    await pg.query<{ cache: number; used: number }>(
      `SELECT pg_size_bytes(current_setting('shared_buffers'))::float8 AS cache,
              (SELECT buffers_used FROM pg_buffercache_summary())::float8 * current_setting('block_size')::int AS used`,
    )
  ).rows;
  // The Emscripten module is not part of PGlite's typed surface.
  const heap = (pg as unknown as { mod?: { HEAPU8?: Uint8Array } }).mod?.HEAPU8?.buffer.byteLength;
  return { heapBytes: heap ?? Number.NaN, cacheBytes: row!.cache, cacheUsedBytes: row!.used };
}
