/**
 * A store over `db` that shows every statement it runs to `seen`, inside transactions too: tests
 * that read a statement's plan (EXPLAIN) run the very statement the store ran.
 */
import type { Db, Queryable } from '../../src/store/db.js';
import { storeOver } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';

export function watchedStore(db: Db, seen: (sql: string, params: unknown[]) => void): Store {
  const watch = (q: Queryable): Queryable => ({
    exec: (sql) => q.exec(sql),
    query: (sql, params) => {
      seen(sql, params ?? []);
      return q.query(sql, params);
    },
  });
  return storeOver({
    ...db,
    engine: db.engine,
    ...watch(db),
    transaction: (fn, mode) => db.transaction((tx) => fn(watch(tx)), mode),
    ping: db.ping.bind(db),
    close: db.close.bind(db),
  });
}
