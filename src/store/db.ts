/**
 * The one thing that differs between the two engines: how SQL reaches PostgreSQL.
 * Both speak the same dialect, placeholders ($1) and migrations.
 */
export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs several statements with no parameters (migrations). */
  exec(sql: string): Promise<void>;
  /**
   * A snapshot's last statement (`transaction(fn, 'snapshot')` only): runs it and ends the
   * snapshot with it, so that the engine is not held until the caller's answer to it arrives
   * (the embedded engine on its own thread: one message instead of two, and no wait between
   * them; PostgreSQL: the COMMIT written with it). Nothing may be sent in the snapshot after it.
   * Where absent, `query` does.
   */
  queryLast?<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
}

export interface Db extends Queryable {
  readonly engine: 'pglite' | 'postgres';
  /**
   * The embedded engine runs on a thread of its own (`pglite-thread.ts`): as on PostgreSQL, a
   * long statement holds no one's event loop, and a round trip costs more than reading more rows.
   */
  readonly ownThread?: boolean;
  /**
   * Settles, with the cause, when the engine is gone for good and no later call can answer (the
   * embedded engine's thread died); stays pending otherwise, after `close` too.
   */
  readonly lost?: Promise<Error>;
  /**
   * Runs `fn` in one transaction; rolls back if it throws. `snapshot`: read only, and every
   * statement sees the same committed state (REPEATABLE READ on PostgreSQL; on the embedded
   * engine any transaction is one, since it holds the only connection until it ends).
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>, mode?: 'snapshot'): Promise<T>;
  /** Cheap round trip, for readiness checks. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /** Connections of the pool (PostgreSQL); the embedded engine has no pool. */
  poolStats?(): PoolStats;
  /** Memory of the embedded engine, which runs inside this process; PostgreSQL has its own. */
  engineMemory?(): Promise<EngineMemory>;
  /** The embedded engine's whole data directory as a tarball, to start another from (`openPglite`'s template). */
  dumpDataDir?(): Promise<Blob>;
}

/**
 * A prepared statement met a table changed under it (a migration, here or in another process):
 * preparing it again answers.
 */
export function changedUnderStatement(err: unknown): boolean {
  return /cached plan must not change result type/.test(String((err as Error | null)?.message));
}

/** Bytes held by the embedded engine (WebAssembly) inside the mnemo process. */
export interface EngineMemory {
  /** Its WebAssembly memory: reserved at start (page cache included), it only ever grows. */
  heapBytes: number;
  /** The page cache's configured size (`MNEMO_EMBEDDED_CACHE_MB`). */
  cacheBytes: number;
  /**
   * Cache pages holding data. A page is resident once first used and the cache never gives
   * pages back, so the process's RSS grows with this up to `cacheBytes`, then stays.
   */
  cacheUsedBytes: number;
}

export interface PoolStats {
  total: number;
  idle: number;
  /** Queries waiting for a free connection. */
  waiting: number;
}
