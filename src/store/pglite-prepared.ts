import { type PGlite, protocol } from '@electric-sql/pglite';
import { changedUnderStatement } from './db.js';
import { AnswerBytes, answerBytes, decode, exchange, type Field, failed } from './pglite-wire.js';

/** SQL texts prepared by name, at most (as on PostgreSQL); the rest run through `query`. */
const PREPARED = 500;

const { serialize } = protocol;

interface Statement {
  name: string;
  /** Parameter type oids, which choose each value's serializer. */
  types: number[];
  /** Its rows' columns, described once: a run then needs no Describe of its own. */
  fields: Field[];
}

/**
 * Runs statements with parameters as named prepared statements on the embedded engine.
 * PGlite's `query` parses, describes and plans its text on every call, in six calls into the
 * engine; a prepared statement is bound and run in one. At 100k memories, reading Recall's 100
 * candidates went from 5.0 to 3.7 ms and reading one bank row from 0.5 to 0.2 ms.
 *
 * As on PostgreSQL, a statement may then run with a generic plan; a query whose plan must see
 * its parameter values sets `plan_cache_mode` in its transaction. Answers are read from their
 * bytes (`pglite-wire.ts`); a statement's columns are described once, when it is prepared.
 * `unread`: a statement's rows are not read here but returned as one `AnswerBytes` (unless it
 * failed: its error is thrown here), for the engine's thread to send them unread.
 */
export function preparedStatements(pg: PGlite, unread = false) {
  const statements = new Map<string, Statement>();
  let made = 0;
  /** Runs a statement: its rows, or its answer unread. */
  const rowsOf = async <T>(parts: Uint8Array[], fields: Field[] = []): Promise<T[]> => {
    const bytes = await answerBytes(pg, parts);
    if (unread && !failed(bytes)) return [new AnswerBytes(bytes, fields) as T];
    return decode<T>(bytes, pg.parsers, fields).rows;
  };

  async function prepare(sql: string): Promise<Statement> {
    const name = `mnemo_${++made}`;
    const described = await exchange(pg, [
      serialize.parse({ name, text: sql }),
      serialize.describe({ type: 'S', name }),
      serialize.sync(),
    ]);
    const statement = { name, types: described.paramTypes, fields: described.fields };
    statements.set(sql, statement);
    return statement;
  }

  async function execute<T>(statement: Statement, params: unknown[]): Promise<T[]> {
    const values = params.map((v, i) => {
      if (v === null || v === undefined) return null;
      const toText = pg.serializers[statement.types[i]!];
      return toText ? toText(v) : String(v);
    });
    return rowsOf<T>(
      [serialize.bind({ statement: statement.name, values }), serialize.execute({}), serialize.sync()],
      statement.fields,
    );
  }

  /**
   * A statement without parameters, unnamed, in one exchange: PGlite's `query` sends the same
   * messages (Parse, Describe, Bind, Describe, Execute, Sync) one exchange each.
   */
  async function once<T>(sql: string): Promise<T[]> {
    return rowsOf<T>([
      serialize.parse({ text: sql }),
      serialize.bind({}),
      serialize.describe({ type: 'P' }),
      serialize.execute({}),
      serialize.sync(),
    ]);
  }

  /**
   * Runs `sql` with `params` (none: unnamed, see `once`); `other` runs it the ordinary way when
   * the cap is reached.
   * `inTransaction`: a failed statement aborts the transaction, so it is not retried there.
   */
  return async function run<T>(
    sql: string,
    params: unknown[],
    other: () => Promise<T[]>,
    inTransaction: boolean,
  ): Promise<T[]> {
    const known = statements.get(sql);
    if (!known && params.length > 0 && statements.size >= PREPARED) return other();
    // One session serves every caller: a statement from outside a transaction must wait for any
    // transaction in progress (PGlite's own `query` does), or it would run inside it: reading
    // its uncommitted rows, and its write undone by the other caller's rollback.
    const exclusive = <R>(fn: () => Promise<R>) =>
      inTransaction ? pg.runExclusive(fn) : pg._runExclusiveTransaction(() => pg.runExclusive(fn));
    const rows = await exclusive(async () => {
      if (params.length === 0) return once<T>(sql);
      const statement = known ?? (await prepare(sql));
      try {
        return await execute<T>(statement, params);
      } catch (err) {
        // A migration changed a table under the statement: prepare it again (under a new name).
        if (!changedUnderStatement(err)) throw err;
        statements.delete(sql);
        if (inTransaction) throw err;
        return execute<T>(await prepare(sql), params);
      }
    });
    if (!inTransaction) await pg.syncToFs();
    return rows;
  };
}
