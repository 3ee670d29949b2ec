/**
 * Embedded test databases kept for the next test of the same process. Starting a PGlite, even
 * from the migrated template, costs ~0.5 s of CPU (a new WebAssembly instance, the data
 * directory unpacked, the server started); emptying one costs a few milliseconds when the test
 * wrote to a few tables. A fast-tier worker runs hundreds of tests one after another, so a
 * closed test database is given back here and handed out again, as the template left it:
 *
 * - the tables the test wrote to are truncated (sequences restarted), and the rows the
 *   migrations seed (`projects`, `schema_migrations`) put back when they changed;
 * - every sequence is set back, and the session's settings, temporary tables and advisory
 *   locks are reset;
 * - a database whose schema the test changed (a table, column, index, constraint, trigger or
 *   function added, dropped or altered), or that fails to reset, is closed instead.
 *
 * A test gets a handle, not the database: once closed, the handle refuses every call (as a
 * closed PGlite does), so work a test leaves running cannot reach the next test's data.
 *
 * Only when MNEMO_TEST_PGLITE_REUSE=1, which `test/run.ts --fast` sets (`npm test` sets 0), and
 * under `test/run.ts`, which preloads `test/runner/databases.ts` to close the kept databases when a process's tests are
 * done: a kept PGlite holds a timer that would keep the process alive.
 */
import type { Db, Queryable } from '../../src/store/db.js';

/** Databases kept per process, at most: tests that open several at once get new ones beyond. */
const KEEP = 3;
const reuse = () => process.env.MNEMO_TEST_PGLITE_REUSE === '1';

/** What a fresh test database looks like, read from the first one this process opens. */
interface Baseline {
  schema: string;
  tables: string[];
  /** Tables holding rows in a fresh database: their rows as JSON and a digest of them. */
  seeds: Map<string, { rows: string; digest: string }>;
  sequences: { name: string; value: string; called: boolean }[];
}

const idle: Db[] = [];
let baseline: Promise<Baseline> | undefined;

/** A digest of the schema: every relation, column, default, constraint, trigger and function. */
const SCHEMA = `
SELECT md5(string_agg(x, ',' ORDER BY x)) AS schema FROM (
  SELECT concat_ws(':', n.nspname, c.relname, c.relkind, a.attname, a.atttypid, a.atttypmod, a.attnotnull,
                   pg_get_expr(d.adbin, d.adrelid)) AS x
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
   WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
     AND n.nspname NOT LIKE 'pg_temp%' -- temporary tables: dropped by the reset
  UNION ALL
  SELECT concat_ws(':', 'constraint', conrelid::regclass::text, conname, pg_get_constraintdef(oid))
    FROM pg_constraint WHERE connamespace = 'public'::regnamespace
  UNION ALL
  SELECT concat_ws(':', 'trigger', tgrelid::regclass::text, tgname, tgenabled, tgfoid::regproc::text)
    FROM pg_trigger WHERE NOT tgisinternal
  UNION ALL
  SELECT concat_ws(':', 'function', p.oid::regprocedure::text, md5(p.prosrc))
    FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
) s`;

const TABLES = `
SELECT c.oid::regclass::text AS name
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind IN ('r', 'p') AND n.nspname = 'public'
 ORDER BY 1`;

const rowsOf = (table: string) =>
  `SELECT coalesce(json_agg(t ORDER BY t::text), '[]')::text AS rows,
          md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) AS digest FROM ${table} t`;

async function readBaseline(db: Queryable): Promise<Baseline> {
  const [{ schema }] = (await db.query<{ schema: string }>(SCHEMA)) as [{ schema: string }];
  const tables = (await db.query<{ name: string }>(TABLES)).map((t) => t.name);
  const seeds = new Map<string, { rows: string; digest: string }>();
  for (const table of tables) {
    const [seed] = await db.query<{ rows: string; digest: string }>(rowsOf(table));
    if (seed && seed.rows !== '[]') seeds.set(table, seed);
  }
  const sequences = (
    await db.query<{ name: string; start: string; last: string | null }>(
      `SELECT format('%I.%I', schemaname, sequencename) AS name, start_value::text AS start,
              last_value::text AS last FROM pg_sequences`,
    )
  ).map((s) => ({ name: s.name, value: s.last ?? s.start, called: s.last !== null }));
  return { schema, tables, seeds, sequences };
}

/** Empties `db` back to the baseline; false when it cannot be (its schema changed). */
async function reset(db: Db, base: Baseline): Promise<boolean> {
  const checks = base.tables.map((t) => {
    const seed = base.seeds.get(t);
    const dirty = seed
      ? `(SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) FROM ${t} t) <> '${seed.digest}'`
      : `EXISTS (SELECT 1 FROM ${t})`;
    return `CASE WHEN ${dirty} THEN '${t.replaceAll("'", "''")}' END`;
  });
  const [state] = await db.query<{ schema: string; dirty: string[] }>(
    `SELECT (${SCHEMA}) AS schema, array_remove(ARRAY[${checks.join(', ')}]::text[], NULL) AS dirty`,
  );
  if (!state || state.schema !== base.schema) return false;
  const statements = ['RESET ALL', 'DISCARD TEMP', 'SELECT pg_advisory_unlock_all()'];
  if (state.dirty.length > 0) {
    statements.push(`TRUNCATE ${state.dirty.join(', ')} RESTART IDENTITY CASCADE`);
    // CASCADE also empties the tables that reference these, seeded ones included.
    for (const [table, seed] of base.seeds)
      statements.push(
        `DELETE FROM ${table}`,
        `INSERT INTO ${table} OVERRIDING SYSTEM VALUE
           SELECT * FROM json_populate_recordset(NULL::${table}, '${seed.rows.replaceAll("'", "''")}')`,
      );
  }
  for (const s of base.sequences)
    statements.push(`SELECT setval('${s.name.replaceAll("'", "''")}', ${s.value}, ${s.called})`);
  await db.exec(statements.join(';\n'));
  return true;
}

/** Closes the databases kept for reuse (when the process's tests are done). */
export async function closeIdle(): Promise<void> {
  for (const db of idle.splice(0)) await db.close();
}

/**
 * A handle on a test database: a kept one if there is one, else `open()`'s. Closing the handle
 * gives the database back (reset) instead of closing it.
 */
export async function lease(open: () => Promise<Db>): Promise<Db> {
  if (!reuse()) return open();
  const db = idle.pop() ?? (await open());
  baseline ??= readBaseline(db);
  let base: Baseline;
  try {
    base = await baseline;
  } catch (err) {
    baseline = undefined;
    await db.close();
    throw err;
  }
  let open_ = true;
  const live = () => {
    if (!open_) throw new Error('the test database was closed');
    return db;
  };
  return {
    engine: db.engine,
    // Async, so a closed handle rejects as a closed database does, rather than throwing.
    query: async (sql, params) => live().query(sql, params),
    exec: async (sql) => live().exec(sql),
    transaction: async (fn, mode) => live().transaction(fn, mode),
    ping: async () => live().ping(),
    engineMemory: async () => live().engineMemory!(),
    dumpDataDir: async () => live().dumpDataDir!(),
    async close() {
      if (!open_) return;
      open_ = false;
      let kept = false;
      try {
        kept = idle.length < KEEP && (await reset(db, base));
      } catch {
        kept = false; // left in a state we cannot undo (an open transaction, a broken session)
      }
      if (kept) idle.push(db);
      else await db.close();
    },
  };
}
