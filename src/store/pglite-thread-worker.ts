import { parentPort, workerData } from 'node:worker_threads';
import { AppError } from '../contract/errors.js';
import type { Queryable } from './db.js';
import { openPglite } from './pglite.js';
import { inBackground } from './priority.js';
import { types } from '@electric-sql/pglite';
import type { Reply, Request, Started, ThreadError, ThreadStart } from './pglite-thread-protocol.js';
import { threadTrace } from './pglite-thread-trace.js';
import { AnswerBytes, decode } from './pglite-wire.js';

/**
 * The embedded engine's thread (`pglite-thread.ts` starts it): it owns the PGlite instance, opened
 * as in the main thread (`openPglite`: the data directory's lock, the refusal of a damaged one,
 * the prepared statements, the priority gate), and answers one message per call.
 */
const port = parentPort!;
const start = workerData as ThreadStart;

/** PGlite's own query for the array types it reads (`_initArrayTypes`). */
const ARRAY_TYPES = `SELECT b.oid, b.typarray
  FROM pg_catalog.pg_type a LEFT JOIN pg_catalog.pg_type b ON b.oid = a.typelem
  WHERE a.typcategory = 'A' GROUP BY b.oid, b.typarray ORDER BY b.oid`;

/** The main thread rolled the transaction back (its function threw): not an error of ours. */
const ROLLBACK = Symbol('rollback');

function pack(err: unknown): ThreadError {
  if (err instanceof AppError)
    return {
      kind: 'app',
      code: err.code,
      message: err.message,
      details: err.details,
      extra: err.extra,
      headers: err.headers,
    };
  if (err instanceof Error) {
    // A DatabaseError's fields (code: its SQLSTATE, detail, constraint, ...) are own properties.
    const fields: Record<string, string | number> = {};
    for (const [k, v] of Object.entries(err))
      if (typeof v === 'string' || typeof v === 'number') fields[k] = v;
    return { kind: 'error', name: err.name, message: err.message, stack: err.stack, fields };
  }
  return { kind: 'error', name: 'Error', message: String(err), fields: {} };
}

const reply = (r: Reply, transfer?: ArrayBuffer[]) => port.postMessage(r, transfer ?? []);

async function main() {
  let db: Awaited<ReturnType<typeof openPglite>>;
  try {
    db = await openPglite(start.dataDir, {
      cacheMb: start.cacheMb,
      template: start.template ? new Blob([start.template]) : undefined,
      unread: true,
    });
  } catch (err) {
    reply({ id: 0, error: pack(err) });
    return;
  }
  // The array types PGlite reads its answers with (`_initArrayTypes`): the main thread reads them too.
  const [arrays] = await db.query<AnswerBytes>(ARRAY_TYPES);
  const started: Started = decode<{ oid: number; typarray: number }>(
    arrays!.bytes,
    types.parsers,
    [],
  ).rows.map((r) => [r.oid, r.typarray]);
  reply({ id: 0, value: started });

  /** Transactions in progress, by the number the main thread gave them: opening, then open. */
  const open = new Map<number, Promise<{ tx: Queryable; end: (commit: boolean) => void }>>();
  /** How each transaction ended (its COMMIT's outcome), by its number. */
  const ended = new Map<number, Promise<void>>();

  /**
   * Opens transaction `n` and holds it (and so the engine) until the main thread ends it. Called
   * with its first statement, in the same message: no round trip with the engine held for BEGIN.
   */
  function begin(n: number, mode: 'snapshot' | undefined): void {
    let opened!: (entry: { tx: Queryable; end: (commit: boolean) => void }) => void;
    let failed!: (err: unknown) => void;
    const entry = new Promise<{ tx: Queryable; end: (commit: boolean) => void }>((resolve, reject) => {
      opened = resolve;
      failed = reject;
    });
    entry.catch(() => {});
    open.set(n, entry);
    let started = false;
    const run = db.transaction(
      (tx) =>
        new Promise<void>((commit, rollback) => {
          started = true;
          opened({ tx, end: (ok) => (ok ? commit() : rollback(ROLLBACK)) });
        }),
      mode,
    );
    const outcome = run.then(
      () => {},
      (err) => {
        if (!started) failed(err);
        else if (err !== ROLLBACK) throw err;
      },
    );
    outcome.catch(() => {});
    ended.set(
      n,
      outcome.finally(() => {
        open.delete(n);
        ended.delete(n);
      }),
    );
  }

  /** Where a statement runs: its transaction (begun with it, if it is the first), or the engine. */
  async function target(m: { tx?: number; begin?: 'snapshot' | 'write' }): Promise<Queryable> {
    if (!m.tx) return db;
    if (m.begin) begin(m.tx, m.begin === 'snapshot' ? 'snapshot' : undefined);
    const entry = open.get(m.tx);
    if (!entry) throw new Error(`transaction ${m.tx} has ended`);
    return (await entry).tx;
  }

  /** Ends transaction `n` (committed or rolled back) once it has begun; one whose BEGIN failed has nothing to end. */
  async function finish(n: number, commit: boolean): Promise<void> {
    const entry = await open.get(n)?.catch(() => null);
    if (!entry) return;
    const done = ended.get(n)!;
    entry.end(commit);
    await done;
  }

  const trace = start.trace ? threadTrace(start.trace.profile) : null;
  const serve = async (
    m: Request,
  ): Promise<{ value: unknown; answer?: AnswerBytes; transfer?: ArrayBuffer[] }> => {
    switch (m.op) {
      case 'query': {
        const q = await target(m);
        let rows: unknown[];
        try {
          rows = await q.query(m.sql, m.params);
        } catch (err) {
          // A snapshot's last statement failed: its transaction ends here all the same.
          if (m.end) await finish(m.tx!, false);
          throw err;
        }
        // A snapshot's last statement: committed before its answer goes (an error of the COMMIT
        // is then this statement's).
        if (m.end) await finish(m.tx!, true);
        // Unread, unless PGlite's own `query` ran it (past the prepared statements' cap).
        const [answer] = rows;
        if (rows.length === 1 && answer instanceof AnswerBytes)
          return { value: undefined, answer, transfer: [answer.bytes.buffer] };
        return { value: rows };
      }
      case 'exec':
        await (await target(m)).exec(m.sql);
        return { value: null };
      case 'end':
        await finish(m.tx, m.commit);
        return { value: null };
      case 'ping':
        await db.ping();
        return { value: null };
      case 'memory':
        return { value: await db.engineMemory!() };
      case 'dump': {
        const bytes = await (await db.dumpDataDir!()).arrayBuffer();
        return { value: bytes, transfer: [bytes] };
      }
      case 'crash':
        setImmediate(() => {
          throw new Error('crashed on request');
        });
        return new Promise(() => {});
      case 'trace':
        return { value: (await trace?.report()) ?? null };
      case 'close':
        await db.close();
        return { value: null };
    }
  };

  port.on('message', (m: Request) => {
    const traced = trace?.received(m);
    const call = () => serve(m);
    const answered = (m.background ? inBackground(call) : call()).then(
      ({ value, answer, transfer }) =>
        reply(
          answer ? { id: m.id, answer: { bytes: answer.bytes, fields: answer.fields } } : { id: m.id, value },
          transfer,
        ),
      (err) => reply({ id: m.id, error: pack(err) }),
    );
    if (traced) void answered.then(traced, traced);
  });
}

void main();
