/**
 * Embedded test databases kept for the next test of the same process. Starting a PGlite, even
 * from the migrated template, costs ~0.5 s of CPU (a new WebAssembly instance, the data
 * directory unpacked, the server started); emptying one costs a few milliseconds when the test
 * wrote to a few tables. A fast-tier worker runs hundreds of tests one after another, so a
 * closed test database is given back here and handed out again, as the template left it:
 *
 * - the tables the test wrote to are truncated with the tables that reference them, and the
 *   rows the migrations seed (`projects`, `schema_migrations`) put back when they changed;
 * - every sequence is set back, and the session's settings, temporary tables and advisory
 *   locks are reset;
 * - a database whose schema the test changed (a table, column, index, constraint, trigger or
 *   function added, dropped or altered: any DDL but on temporary objects, counted by an event
 *   trigger, see WATCH_DDL), or that fails to reset, is closed instead.
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
  tables: string[];
  /** Tables holding rows in a fresh database: their rows as JSON and a digest of them. */
  seeds: Map<string, { rows: string; digest: string }>;
  /** The tables whose foreign keys reference each table, directly or through others. */
  referencedBy: Map<string, string[]>;
  sequences: { name: string; value: string; called: boolean }[];
}

const idle: Db[] = [];
let baseline: Promise<Baseline> | undefined;

/**
 * Counts the schema changes made in a test database: an event trigger, in `pg_catalog` (out of
 * the schemas the app and the tests read), that advances a sequence there at the end of every
 * DDL statement (CREATE, ALTER, DROP, COMMENT, GRANT... of a table, column, index, constraint,
 * trigger, function, schema, extension) but those on temporary objects, which the reset drops.
 * Fired whatever `session_replication_role` says (ENABLE ALWAYS); a sequence, so a change made
 * in a transaction that fails later still counts (the database is then closed for nothing,
 * which is safe). It replaces a digest of the catalogue computed at every reset (~14 ms of CPU
 * against ~1 ms, warm), and sees more: an index redefined under the same name, a grant.
 */
const WATCH_DDL = `
CREATE SEQUENCE pg_catalog.mnemo_test_ddl;
CREATE FUNCTION pg_catalog.mnemo_test_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_EVENT = 'sql_drop' THEN
    IF EXISTS (SELECT 1 FROM pg_event_trigger_dropped_objects() WHERE NOT is_temporary) THEN
      PERFORM nextval('pg_catalog.mnemo_test_ddl');
    END IF;
  -- A DROP's objects are reported to sql_drop above; any other command counts unless every
  -- object it reports is temporary.
  ELSIF TG_TAG NOT LIKE 'DROP %' AND (
      NOT EXISTS (SELECT 1 FROM pg_event_trigger_ddl_commands())
      OR EXISTS (SELECT 1 FROM pg_event_trigger_ddl_commands()
                  WHERE coalesce(schema_name, '') NOT LIKE 'pg\\_temp%')) THEN
    PERFORM nextval('pg_catalog.mnemo_test_ddl');
  END IF;
END $$;
CREATE EVENT TRIGGER mnemo_test_ddl ON ddl_command_end EXECUTE FUNCTION pg_catalog.mnemo_test_ddl();
CREATE EVENT TRIGGER mnemo_test_ddl_drop ON sql_drop EXECUTE FUNCTION pg_catalog.mnemo_test_ddl();
ALTER EVENT TRIGGER mnemo_test_ddl ENABLE ALWAYS;
ALTER EVENT TRIGGER mnemo_test_ddl_drop ENABLE ALWAYS;`;

const CHANGES = `SELECT CASE WHEN is_called THEN last_value ELSE 0 END::int FROM pg_catalog.mnemo_test_ddl`;

/** The schema changes counted in a leased test database since it was last handed out. */
export async function schemaChanges(db: Queryable): Promise<number> {
  const [row] = await db.query<{ n: number }>(`SELECT (${CHANGES}) AS n`);
  return row!.n;
}

/** A new test database, its schema changes counted from now on. */
async function watched(open: () => Promise<Db>): Promise<Db> {
  const db = await open();
  try {
    await db.exec(WATCH_DDL);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}

const TABLES = `
SELECT c.oid::regclass::text AS name
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind IN ('r', 'p') AND n.nspname = 'public'
 ORDER BY 1`;

const REFERENCED_BY = `
WITH RECURSIVE refs(target, source) AS (
  SELECT confrelid, conrelid FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace
  UNION
  SELECT r.target, k.conrelid FROM refs r JOIN pg_constraint k ON k.contype = 'f' AND k.confrelid = r.source
)
SELECT target::regclass::text AS name, array_agg(DISTINCT source::regclass::text) AS by
  FROM refs WHERE source <> target GROUP BY target`;

const rowsOf = (table: string) =>
  `SELECT coalesce(json_agg(t ORDER BY t::text), '[]')::text AS rows,
          md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) AS digest FROM ${table} t`;

async function readBaseline(db: Queryable): Promise<Baseline> {
  const tables = (await db.query<{ name: string }>(TABLES)).map((t) => t.name);
  const seeds = new Map<string, { rows: string; digest: string }>();
  for (const table of tables) {
    const [seed] = await db.query<{ rows: string; digest: string }>(rowsOf(table));
    if (seed && seed.rows !== '[]') seeds.set(table, seed);
  }
  // The DDL counter's sequence is one of them: the reset sets it back too.
  const sequences = (
    await db.query<{ name: string; start: string; last: string | null }>(
      `SELECT format('%I.%I', schemaname, sequencename) AS name, start_value::text AS start,
              last_value::text AS last FROM pg_sequences`,
    )
  ).map((s) => ({ name: s.name, value: s.last ?? s.start, called: s.last !== null }));
  const referencedBy = new Map<string, string[]>();
  for (const r of await db.query<{ name: string; by: string[] }>(REFERENCED_BY))
    referencedBy.set(r.name, r.by);
  return { tables, seeds, referencedBy, sequences };
}

/** Empties `db` back to the baseline; false when it cannot be (its schema changed). */
async function reset(db: Db, base: Baseline): Promise<boolean> {
  // A table written to since its last truncation has pages (even if its rows were deleted or
  // rolled back); a seeded one is compared with its seed.
  const seeded = [...base.seeds].map(
    ([t, seed]) =>
      `CASE WHEN (SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) FROM ${t} t)
                 <> '${seed.digest}' THEN '${t.replaceAll("'", "''")}' END`,
  );
  const [state] = await db.query<{ changes: number; dirty: string[] }>(
    `SELECT (${CHANGES}) AS changes,
            array(SELECT t FROM unnest($1::text[]) t WHERE pg_relation_size(t::regclass) > 0)
              || array_remove(ARRAY[${seeded.join(', ')}]::text[], NULL) AS dirty`,
    [base.tables.filter((t) => !base.seeds.has(t))],
  );
  if (!state || state.changes > 0) return false;
  const statements = ['RESET ALL', 'DISCARD TEMP', 'SELECT pg_advisory_unlock_all()'];
  if (state.dirty.length > 0) {
    // A table is truncated with every table that references it (TRUNCATE refuses otherwise):
    // named rather than found by CASCADE, which costs a notice per table and would empty a
    // seeded table unseen. The sequences are set back below.
    const emptied = new Set(state.dirty.flatMap((t) => [t, ...(base.referencedBy.get(t) ?? [])]));
    statements.push(`TRUNCATE ${[...emptied].join(', ')}`);
    for (const [table, seed] of base.seeds)
      if (emptied.has(table))
        statements.push(
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
  const db = idle.pop() ?? (await watched(open));
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
