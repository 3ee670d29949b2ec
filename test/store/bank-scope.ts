/**
 * What "ready to be distributed by bank" means, as checks over a schema and over the store's
 * statements (test/store/citus-ready.test.ts runs them). Pure functions: the test feeds them a
 * migrated database's catalogue and the statements read from `src/store/sql`.
 */
import type { Queryable } from '../../src/store/db.js';
import type { Statement } from './statements.js';

export interface Schema {
  /** Table → its columns. */
  columns: Map<string, string[]>;
  /** Table → its primary key's columns. */
  primaryKeys: Map<string, string[]>;
  foreignKeys: { table: string; columns: string[]; references: string; referenced: string[] }[];
  uniques: { table: string; index: string; columns: string[] }[];
}

/** The public tables of a migrated database, read from the catalogue (the same on both engines). */
export async function readSchema(db: Queryable): Promise<Schema> {
  const cols = await db.query<{ t: string; c: string }>(
    `SELECT c.relname AS t, a.attname AS c FROM pg_class c
     JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
     WHERE c.relkind IN ('r', 'p') AND c.relnamespace = 'public'::regnamespace ORDER BY c.relname, a.attnum`,
  );
  // Key columns only (indnkeyatts): an index's INCLUDE columns take no part in its uniqueness.
  const indexes = await db.query<{ t: string; i: string; primary: boolean; cols: string[] }>(
    `SELECT c.relname AS t, ic.relname AS i, x.indisprimary AS primary,
       array(SELECT a.attname::text FROM unnest(x.indkey[0:x.indnkeyatts - 1]) WITH ORDINALITY k(n, o)
             JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.n ORDER BY k.o) AS cols
     FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid JOIN pg_class ic ON ic.oid = x.indexrelid
     WHERE x.indisunique AND c.relnamespace = 'public'::regnamespace ORDER BY 1, 2`,
  );
  const fks = await db.query<{ t: string; cols: string[]; r: string; rcols: string[] }>(
    `SELECT c.relname AS t, r.relname AS r,
       array(SELECT a.attname::text FROM unnest(k.conkey) WITH ORDINALITY u(n, o)
             JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n ORDER BY u.o) AS cols,
       array(SELECT a.attname::text FROM unnest(k.confkey) WITH ORDINALITY u(n, o)
             JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n ORDER BY u.o) AS rcols
     FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class r ON r.oid = k.confrelid
     WHERE k.contype = 'f' AND c.relnamespace = 'public'::regnamespace ORDER BY 1, 2`,
  );
  const columns = new Map<string, string[]>();
  for (const { t, c } of cols) columns.set(t, [...(columns.get(t) ?? []), c]);
  return {
    columns,
    primaryKeys: new Map(indexes.filter((x) => x.primary).map((x) => [x.t, x.cols])),
    foreignKeys: fks.map((f) => ({ table: f.t, columns: f.cols, references: f.r, referenced: f.rcols })),
    uniques: indexes.map((x) => ({ table: x.t, index: x.i, columns: x.cols })),
  };
}

/** The column naming the bank in a table: `id` in `banks` itself, `bank_id` everywhere else. */
const bankColumn = (table: string) => (table === 'banks' ? 'id' : 'bank_id');

/** Tables of bank data: `banks`, and every table whose primary key holds `bank_id`. */
export function bankTables(schema: Schema): string[] {
  return [...schema.primaryKeys]
    .filter(([t, pk]) => t === 'banks' || pk.includes('bank_id'))
    .map(([t]) => t)
    .sort();
}

/**
 * What keeps the schema from being distributed by bank (one line each): a table with a
 * `bank_id` column whose primary key lacks it, a bank table whose key lacks the project, and a
 * unique index or foreign key among bank tables that does not include the bank (a distributed
 * database checks those per shard, so each must hold the distribution column).
 */
export function schemaGaps(schema: Schema): string[] {
  const gaps: string[] = [];
  const banked = new Set(bankTables(schema));
  for (const [table, cols] of schema.columns) {
    const pk = schema.primaryKeys.get(table) ?? [];
    if (cols.includes('bank_id') && !pk.includes('bank_id')) {
      gaps.push(`${table}: has bank_id, primary key (${pk.join(', ')}) lacks it`);
    }
    if (banked.has(table) && !pk.includes('project_id')) {
      gaps.push(`${table}: primary key (${pk.join(', ')}) lacks project_id`);
    }
  }
  for (const u of schema.uniques) {
    if (banked.has(u.table) && !u.columns.includes(bankColumn(u.table))) {
      gaps.push(`${u.table}: unique index ${u.index} (${u.columns.join(', ')}) lacks the bank`);
    }
  }
  for (const f of schema.foreignKeys) {
    if (!banked.has(f.table) || !banked.has(f.references)) continue;
    const at = f.columns.indexOf(bankColumn(f.table));
    if (at < 0 || f.referenced[at] !== bankColumn(f.references)) {
      gaps.push(
        `${f.table}: foreign key (${f.columns.join(', ')}) → ${f.references} (${f.referenced.join(', ')}) does not match the bank`,
      );
    }
  }
  return gaps;
}

/** `bank_id = $2`, `bank_id = ANY($3)`: a parameter names the bank. */
const BANK_PARAM = /\bbank_id\s*=\s*(?:\$\d+|ANY\s*\(\s*\$\d+)/i;
/** In `banks` itself the bank is its `id`. */
const BANK_ROW_PARAM = /\bid\s*=\s*(?:\$\d+|ANY\s*\(\s*\$\d+)/i;
/** Joined on the bank to another table (`m.bank_id = e.bank_id`, `b.id = e.bank_id`). */
const BANK_JOIN = /\b(?:bank_id\s*=\s*\w+\.(?:bank_id|id)\b|\w+\.id\s*=\s*\w+\.bank_id\b)/i;

/** The text from `at` to the end of its parenthesis level: the clauses that govern a reference there. */
function levelFrom(sql: string, at: number): string {
  let depth = 0;
  let i = at;
  for (; i < sql.length; i++) {
    if (sql[i] === '(') depth++;
    else if (sql[i] === ')') {
      if (depth === 0) break;
      depth--;
    }
  }
  return sql.slice(at, i);
}

/**
 * The references of a statement to bank tables that no bank narrows: each FROM, JOIN, UPDATE or
 * DELETE of a bank table needs, in the clauses of its own level, its bank compared with a
 * parameter, or a join on the bank to a table that is (the statement names a bank by
 * parameter); an INSERT needs the bank among its columns (its rows go to their bank).
 */
export function unscopedReferences(sql: string, banked: readonly string[]): string[] {
  const out: string[] = [];
  const namesBank = BANK_PARAM.test(sql) || (/\bbanks\b/i.test(sql) && BANK_ROW_PARAM.test(sql));
  for (const m of sql.matchAll(/\b(FROM|JOIN|UPDATE|INTO|USING)\s+(\w+)/gi)) {
    const table = m[2]!.toLowerCase();
    if (!banked.includes(table)) continue;
    const level = levelFrom(sql, m.index!);
    const scoped =
      m[1]!.toUpperCase() === 'INTO'
        ? new RegExp(`^\\s*(?:\\w+\\s*)?\\([^)]*\\b${bankColumn(table)}\\b`).test(
            sql.slice(m.index! + m[0].length),
          )
        : BANK_PARAM.test(level) ||
          (table === 'banks' && BANK_ROW_PARAM.test(level)) ||
          (namesBank && BANK_JOIN.test(level));
    if (!scoped) out.push(`${m[1]!.toUpperCase()} ${table}`);
  }
  return out;
}

/** Per method (`file:method`), how many of its statements reach bank data without naming a bank. */
export function unscopedStatements(
  statements: Statement[],
  banked: readonly string[],
): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const s of statements) {
    if (s.sql !== null && unscopedReferences(s.sql, banked).length === 0) continue;
    counts[s.where] = (counts[s.where] ?? 0) + 1;
  }
  return counts;
}
