import { Worker } from 'node:worker_threads';
import { AppError } from '../contract/errors.js';
import type { Db, EngineMemory, Queryable } from './db.js';
import { checkFence } from './fence.js';
import { isBackground, priorityGate } from './priority.js';
import { types } from '@electric-sql/pglite';
import type { Reply, Request, Started, ThreadError, ThreadStart } from './pglite-thread-protocol.js';
import type { ThreadTrace } from './pglite-thread-trace.js';
import { decode, type Parsers } from './pglite-wire.js';

/**
 * The thread's script, beside this file: `.js` once compiled; `.ts` when run through tsx (tests,
 * `npm start`), where a thread does not inherit tsx's loader, so a short bootstrap registers it
 * in the thread first (as `src/text/pdf.ts` does). PGlite is imported first, by Node itself.
 */
const WORKER_URL = new URL(
  import.meta.url.endsWith('.ts') ? './pglite-thread-worker.ts' : './pglite-thread-worker.js',
  import.meta.url,
);
const WORKER_ENTRY: string | URL = WORKER_URL.pathname.endsWith('.ts')
  ? `import(${JSON.stringify(import.meta.resolve('@electric-sql/pglite'))})
       .then(() => import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}))
       .then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL.href)}); });`
  : WORKER_URL;

/** The error thrown in the thread, made again here with what callers read of it. */
function unpack(e: ThreadError): Error {
  if (e.kind === 'app')
    return new AppError(e.code, e.message, { details: e.details, extra: e.extra, headers: e.headers });
  const err = Object.assign(new Error(e.message), e.fields);
  err.name = e.name;
  if (e.stack) err.stack = e.stack;
  return err;
}

/** A request as its caller gives it (`call` adds its id and whether it is background work), each kind on its own. */
type Call<R = Request> = R extends Request ? Omit<R, 'id' | 'background'> : never;

/** Each thread's engine's way to crash it (tests). */
const crashes = new WeakMap<Db, () => Promise<unknown>>();

/** Tests: ends the engine's thread as a crash would (an error nothing catches). */
export const crashEngineThread = (db: Db): Promise<unknown> => crashes.get(db)!();

/** Each traced thread's engine's way to read its trace (benches). */
const traces = new WeakMap<Db, () => Promise<ThreadTrace>>();

/** Benches: what the engine's thread spent since the last call (opened with `trace`). */
export const engineThreadTrace = (db: Db): Promise<ThreadTrace> => traces.get(db)!();

/**
 * Opens the embedded engine on a thread of its own (`worker_threads`): the engine's work for one
 * request (planning and running statements in WebAssembly, decoding their rows) runs beside the
 * JavaScript of the others on the main thread, instead of taking turns with it. Same `Db` as
 * `openPglite` (which the thread runs, see `pglite-thread-worker.ts`); each call is one message
 * and its answer, a statement's rows sent unread (its answer's bytes, transferred) and read here.
 * Statements are sent as they come: the thread's priority gate orders them (a background
 * caller's are marked so), and a transaction holds the engine there from its first statement
 * (which carries the BEGIN) until this side ends it.
 *
 * A thread that dies (out of memory, a crash) fails every pending and later call with an
 * `unavailable` error instead of leaving it waiting, and settles `lost`. The thread keeps the
 * process alive only while a call waits on it.
 */
export async function openPgliteThread(
  dataDir?: string,
  opts: { cacheMb?: number; template?: Blob; trace?: ThreadStart['trace'] } = {},
): Promise<Db> {
  const template = opts.template ? await opts.template.arrayBuffer() : undefined;
  const start: ThreadStart = { dataDir, cacheMb: opts.cacheMb, template, trace: opts.trace };
  // Copied, not transferred: a Blob may hand out the buffer it keeps (the tests' templates do).
  const worker = new Worker(WORKER_ENTRY, { eval: typeof WORKER_ENTRY === 'string', workerData: start });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let made = 0;
  let gone: AppError | undefined;
  let closed: Promise<void> | undefined;
  let lostWith!: (why: Error) => void;
  const lost = new Promise<Error>((resolve) => {
    lostWith = resolve;
  });

  const settle = (id: number) => {
    const p = pending.get(id);
    pending.delete(id);
    if (pending.size === 0) worker.unref();
    return p;
  };
  const fail = (why: string) => {
    gone ??= new AppError(
      'unavailable',
      `the embedded database's thread stopped (${why}); restart mnemo to open it again`,
    );
    if (!closed) lostWith(gone);
    for (const id of [...pending.keys()]) settle(id)!.reject(gone);
  };
  let parsers: Parsers = types.parsers;
  worker.on('message', (r: Reply) => {
    const p = settle(r.id);
    if (!p) return;
    if (r.error) p.reject(unpack(r.error));
    else if (r.answer) {
      try {
        p.resolve(decode(r.answer.bytes, parsers, r.answer.fields).rows);
      } catch (err) {
        p.reject(err as Error);
      }
    } else p.resolve(r.value);
  });
  worker.on('error', (err) => fail(err.message));
  worker.on('exit', (code) => fail(`it exited with code ${code}`));

  const wait = <T>(id: number) =>
    new Promise<T>((resolve, reject) => {
      if (pending.size === 0) worker.ref();
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
    });
  const call = <T>(c: Call): Promise<T> => {
    if (gone) return Promise.reject(gone);
    const id = ++made;
    const answer = wait<T>(id);
    worker.postMessage({ ...c, id, background: isBackground() || undefined } as Request);
    return answer;
  };

  const arrays = await wait<Started>(0).catch(async (err) => {
    await worker.terminate();
    throw err;
  });
  // PGlite's parsers: its defaults, and one per array type of the database (as `_initArrayTypes`).
  parsers = { ...types.parsers };
  for (const [oid, typarray] of arrays)
    parsers[typarray] = (x: string) => types.arrayParser(x, parsers[oid]!, typarray);

  const top: Queryable = {
    query: <T>(sql: string, params?: unknown[]) => call<T[]>({ op: 'query', sql, params }),
    exec: (sql) => call<void>({ op: 'exec', sql }),
  };
  let transactions = 0;
  // Requests' statements go to the thread as they come; background work waits here until they
  // are quiet (the thread's gate alone would see a quiet between two statements of one request
  // while its answer travels back and the next comes).
  const gate = priorityGate({ serial: false });
  const transaction: Db['transaction'] = async (fn, mode) => {
    const tx = ++transactions;
    // Its first statement begins it, in the same message (none: there is nothing to end).
    let begun = false;
    const begin = () => {
      if (begun) return undefined;
      begun = true;
      return mode ?? 'write';
    };
    // A snapshot's last statement ends it in the thread (`queryLast`): nothing is sent after it.
    let ended = false;
    const refuseEnded = () =>
      ended ? Promise.reject(new Error('the snapshot has ended with its last statement')) : null;
    const q: Queryable = {
      query: <T>(sql: string, params?: unknown[]) =>
        refuseEnded() ?? call<T[]>({ op: 'query', sql, params, tx, begin: begin() }),
      exec: (sql) => refuseEnded() ?? call<void>({ op: 'exec', sql, tx, begin: begin() }),
    };
    if (mode === 'snapshot')
      q.queryLast = <T>(sql: string, params?: unknown[]) => {
        const refused = refuseEnded();
        ended = true;
        return refused ?? call<T[]>({ op: 'query', sql, params, tx, begin: begin(), end: true });
      };
    let result: Awaited<ReturnType<typeof fn>>;
    try {
      // A job's write checks first that its bank was not deleted meanwhile (store/fence.ts):
      // the job's fence is known on this thread.
      if (mode !== 'snapshot') await checkFence(q);
      result = await fn(q);
    } catch (err) {
      if (begun && !ended) await call({ op: 'end', tx, commit: false }).catch(() => {});
      throw err;
    }
    if (begun && !ended) await call({ op: 'end', tx, commit: true });
    return result;
  };
  const db: Db = {
    engine: 'pglite',
    ownThread: true,
    lost,
    query: (sql, params) => gate(() => top.query(sql, params)),
    exec: (sql) => gate(() => top.exec(sql)),
    transaction: (fn, mode) => gate(() => transaction(fn, mode)),
    ping: () => call({ op: 'ping' }),
    engineMemory: () => call<EngineMemory>({ op: 'memory' }),
    dumpDataDir: async () => new Blob([await call<ArrayBuffer>({ op: 'dump' })]),
    close() {
      closed ??= (async () => {
        try {
          if (!gone) await call({ op: 'close' });
        } finally {
          gone ??= new AppError('unavailable', 'the embedded database is closed');
          await worker.terminate();
        }
      })();
      return closed;
    },
  };
  crashes.set(db, () => call({ op: 'crash' }));
  if (opts.trace) traces.set(db, () => call<ThreadTrace>({ op: 'trace' }));
  return db;
}
