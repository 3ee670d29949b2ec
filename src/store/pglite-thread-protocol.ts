import type { ErrorDetail } from '../contract/errors.js';
import type { ErrorCode } from '../contract/vocabulary.js';
import type { Field } from './pglite-wire.js';

/** What the embedded engine's thread is started with (`workerData`). */
export interface ThreadStart {
  dataDir?: string;
  cacheMb?: number;
  /** A data directory tarball to start from (`openPglite`'s template), transferred. */
  template?: ArrayBuffer;
  /**
   * Benches: the thread times its calls (`pglite-thread-trace.ts`), reported by the `trace` call;
   * `profile`: a file for a V8 profile of the thread between the first two such calls.
   */
  trace?: { profile?: string };
}

interface Call {
  /** Numbers the answer; 0 is the thread's answer to its start. */
  id: number;
  /** Background work (`inBackground`): the thread's priority gate lets requests go first. */
  background?: boolean;
}

/** One call from the main thread: one message, one answer. */
export type Request = Call &
  (
    | ({ op: 'query'; sql: string; params?: unknown[] } & InTransaction)
    | ({ op: 'exec'; sql: string } & InTransaction)
    /** Ends a transaction that has begun (committed or rolled back), answering once it has. */
    | { op: 'end'; tx: number; commit: boolean }
    | { op: 'ping' | 'memory' | 'dump' | 'close' | 'trace' }
    /** Tests: the thread throws an error nothing catches, as a crash ends it. */
    | { op: 'crash' }
  );

/**
 * A statement's transaction, numbered by the main thread; its first statement also begins it
 * (`begin`: its mode), so that BEGIN costs no round trip of its own with the engine held.
 */
interface InTransaction {
  tx?: number;
  begin?: 'snapshot' | 'write';
  /** A snapshot's last statement (`queryLast`): its transaction is committed with it, before the answer. */
  end?: boolean;
}

/** An error thrown in the thread, as it crosses to the main thread. */
export type ThreadError =
  | {
      kind: 'app';
      code: ErrorCode;
      message: string;
      details?: ErrorDetail[];
      extra?: Record<string, unknown>;
      headers?: Record<string, string>;
    }
  | {
      kind: 'error';
      name: string;
      message: string;
      stack?: string;
      /** Its own fields: a DatabaseError's SQLSTATE `code`, `detail`, `constraint`, ... */
      fields: Record<string, string | number>;
    };

/**
 * A call's answer. A statement's rows come unread (`answer`: its bytes, transferred, and the
 * columns of its rows when no description comes with them), read on the main thread.
 */
export type Reply =
  | { id: number; value: unknown; answer?: undefined; error?: undefined }
  | { id: number; answer: { bytes: Uint8Array; fields: Field[] }; error?: undefined }
  | { id: number; error: ThreadError };

/** The thread's answer to its start: the array types' oids (`[element, array]`), to read them. */
export type Started = [number, number][];
