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
      const q = serialized(wrap(client));
      try {
        await q.exec(mode === 'snapshot' ? 'BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY' : 'BEGIN');
        // A job's write checks first that its bank was not deleted meanwhile (store/fence.ts).
        if (mode !== 'snapshot') await checkFence(q);
        const result = await fn(q);
        await q.exec('COMMIT');
        return result;
      } catch (err) {
        if (!broken) await client.query('ROLLBACK').catch(() => {});
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
 * One connection runs one statement at a time; callers in a transaction may issue several at
 * once (Recall's channels), so they wait their turn here rather than in the driver's deprecated
 * queue.
 */
function serialized(q: Queryable): Queryable {
  let tail: Promise<unknown> = Promise.resolve();
  const turn = <T>(run: () => Promise<T>): Promise<T> => {
    const next = tail.then(run, run);
    tail = next.catch(() => {});
    return next;
  };
  return {
    query: (sql, params) => turn(() => q.query(sql, params)),
    exec: (sql) => turn(() => q.exec(sql)),
  };
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
