import pg from 'pg';
import { AppError } from '../contract/errors.js';
import { changedUnderStatement, type Db, type Queryable } from './db.js';
import { inputError } from './input-errors.js';
import { checkFence } from './fence.js';
import { parseTimestamptz } from './pg-timestamp.js';

// int8 (counts, sequences) as numbers: our values stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));
// timestamptz read by position, not by regular expression (same Dates: store/pg-timestamp.ts).
pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, parseTimestamptz);

/** Errors that mean "the database is not reachable right now" rather than a bad query. */
function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: string }).code ?? '';
  return (
    [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'ENOTFOUND',
      'EPIPE',
      '57P01',
      '57P03',
      '08006',
      '08001',
    ].includes(code) || /Connection terminated|connection timeout/i.test(String((err as Error).message))
  );
}

function translate(err: unknown): never {
  // Every pooled connection stayed busy for the whole connection timeout: overload, not a bug.
  if (/timeout exceeded when trying to connect/.test(String((err as Error)?.message))) {
    throw new AppError('unavailable', 'no database connection became free in time; retry', {
      headers: { 'Retry-After': '1' },
    });
  }
  if (isConnectionError(err)) throw new AppError('unavailable', 'database unavailable');
  throw inputError(err) ?? err;
}

/** Opens the PostgreSQL engine; fails with a message naming the host and the cause. */
export async function openPostgres(url: string, opts: { poolSize?: number } = {}): Promise<Db> {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.poolSize ?? 10,
    connectionTimeoutMillis: 5000,
    // A transaction's statements sent together go out together (`pipelined`): a snapshot's BEGIN
    // with its first statement, its last statement with its COMMIT.
    pipeline: true,
    // No JIT: a named statement runs on a generic plan, whose estimates grow with the bank; at 1M
    // memories the keyword function's passed jit_above_cost and each call spent ~100 ms compiling
    // for ~3 ms of work. Run before the new connection is handed out (a failure fails the connect).
    onConnect: async (client) => {
      await client.query('SET jit = off');
    },
  });
  pool.on('error', () => {}); // idle client errors surface on the next query instead of crashing
  const named = statementNames();
  const wrap = (q: pg.Pool | pg.PoolClient): Queryable => ({
    async query<T>(sql: string, params?: unknown[]) {
      try {
        const statement = named(sql, params);
        const res = await q.query(statement).catch((err) => {
          // Another process's migration changed a table under the prepared statement: the
          // server has re-prepared it by now, and the second run answers.
          if (!statement.name || !changedUnderStatement(err)) throw err;
          return q.query(statement);
        });
        return res.rows as T[];
      } catch (err) {
        return translate(err);
      }
    },
    async exec(sql: string) {
      try {
        await q.query(sql);
      } catch (err) {
        translate(err);
      }
    },
  });
  try {
    await pool.query('SELECT 1');
  } catch (err) {
    await pool.end().catch(() => {});
    const host = safeHost(url);
    throw new AppError('unavailable', `cannot connect to PostgreSQL at ${host}: ${(err as Error).message}`);
  }
  return {
    engine: 'postgres',
    ...wrap(pool),
    async transaction(fn, mode) {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        return translate(err);
      }
      // A checked-out client has no pool listener: without ours, a connection the server drops
      // (PostgreSQL restarting) would be an unhandled 'error' event and end the process.
      let broken: Error | undefined;
      const onError = (err: Error) => {
        broken = err;
      };
      client.on('error', onError);
      const snapshot = mode === 'snapshot';
      const q = pipelined(
        client,
        wrap(client),
        snapshot ? 'BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY' : null,
      );
      try {
        // A write's BEGIN is answered before anything is sent in it: a statement sent behind a
        // BEGIN that failed would run, and commit, on its own.
        if (!snapshot) await q.exec('BEGIN');
        // A job's write checks first that its bank was not deleted meanwhile (store/fence.ts).
        if (!snapshot) await checkFence(q);
        const result = await fn(q);
        if (q.open()) await q.exec('COMMIT');
        return result;
      } catch (err) {
        if (!broken && q.open()) await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.off('error', onError);
        // A broken connection is discarded instead of going back to the pool.
        client.release(broken);
      }
    },
    async ping() {
      await wrap(pool).query('SELECT 1');
    },
    close: () => pool.end(),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  };
}

/** SQL texts given a statement name, at most; the rest are parsed on every run. */
const NAMED_STATEMENTS = 500;

/**
 * Names the statements mnemo runs with parameters, so each connection parses each one once
 * instead of on every run (a Recall on a 10k bank spent ~3 of its ~12 ms of server time parsing
 * and planning). Names are per text, for the process's life; texts beyond the cap run unnamed.
 * PostgreSQL may then run a statement with a generic plan: a query whose plan must see its
 * parameter values (a bank's own partial vector index) sets `plan_cache_mode` in its transaction.
 */
function statementNames() {
  const names = new Map<string, string>();
  return (text: string, values?: unknown[]): pg.QueryConfig => {
    if (!values?.length) return { text };
    let name = names.get(text);
    if (!name && names.size < NAMED_STATEMENTS) {
      name = `mnemo_${names.size + 1}`;
      names.set(text, name);
    }
    return { name, text, values };
  };
}

/**
 * A transaction's connection: statements issued together (in one turn of the event loop) are
 * written to the socket at once, without waiting for each other's answers (the client is in
 * pipeline mode; PostgreSQL runs them in order). A snapshot's BEGIN (`begin`) goes with its first
 * statement, which answers only once the BEGIN has; `queryLast` sends the COMMIT with the
 * snapshot's last statement. Each statement written costs the process a system call and the
 * database a wake-up: a Recall's snapshot was four round trips and is two.
 */
function pipelined(
  client: pg.PoolClient,
  q: Queryable,
  begin: string | null,
): Queryable & { open(): boolean } {
  const stream = (client as unknown as { connection: { stream: NodeJS.WritableStream & Partial<Corkable> } })
    .connection.stream;
  let corked = false;
  /** Holds writes until the end of this turn, so that what is sent together goes in one write. */
  const together = () => {
    if (corked || !stream.cork || !stream.uncork) return;
    corked = true;
    stream.cork();
    process.nextTick(() => {
      corked = false;
      stream.uncork!();
    });
  };
  let begun: Promise<void> | null = null;
  let ended = false;
  const send = <T>(run: () => Promise<T>): Promise<T> => {
    if (ended) return Promise.reject(new Error('the snapshot has ended with its last statement'));
    together();
    if (begin && !begun) {
      begun = q.exec(begin);
      begun.catch(() => {});
    }
    const answer = run();
    if (!begun) return answer;
    answer.catch(() => {}); // when the BEGIN failed, its error is the answer
    return begun.then(() => answer);
  };
  const out: Queryable & { open(): boolean } = {
    query: (sql, params) => send(() => q.query(sql, params)),
    exec: (sql) => send(() => q.exec(sql)),
    /** Whether the transaction has begun and not ended: what is left to commit or roll back. */
    open: () => !ended && (!begin || begun !== null),
  };
  if (begin)
    out.queryLast = <T>(sql: string, params?: unknown[]) =>
      send(() => {
        const rows = q.query<T>(sql, params);
        const commit = q.exec('COMMIT');
        ended = true;
        // A failed statement's transaction is rolled back by the COMMIT; the statement's error is the answer.
        return rows.then(
          async (r) => {
            await commit;
            return r;
          },
          async (err) => {
            await commit.catch(() => {});
            throw err;
          },
        );
      });
  return out;
}

interface Corkable {
  cork(): void;
  uncork(): void;
}

/** host:port/db of a URL, without credentials, for messages. */
export function safeHost(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || 5432}${u.pathname}`;
  } catch {
    return '(unparseable MNEMO_DATABASE_URL)';
  }
}
