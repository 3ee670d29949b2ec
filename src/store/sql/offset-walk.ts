import type { Queryable } from '../db.js';
import { breathe } from '../breathe.js';

/**
 * Rows one statement may skip on the way to a deep `offset` (issue 18). `OFFSET n` reads n rows
 * in one statement, which on the embedded engine holds the event loop's only thread for all of
 * them; a hop of this many sort keys, read through the listing's index, takes a few milliseconds.
 */
export const SKIP_PER_STATEMENT = 5_000;

/** One column of a listing's order: unique together, non-null, backed by an index. */
export interface OrderKey {
  /** The column as the listing names it (`m.seq`). */
  expr: string;
  /** Its SQL type, to read the key back exactly (as text) and compare with it. */
  type: string;
  desc?: boolean;
}

/** A listing: `FROM <from> WHERE <where>` in `order`, `where`'s parameters in `params`. */
export interface Listing {
  from: string;
  where: string;
  params: unknown[];
  order: OrderKey[];
}

/** `ORDER BY` of a listing's keys. */
export const orderBy = (order: OrderKey[]) =>
  order.map((k) => `${k.expr}${k.desc ? ' DESC' : ''}`).join(', ');

/**
 * Rows after `keys` in the listing's order, as a condition (` AND …`) over parameters it pushes
 * to `params`: the range of the first key (which the index serves), then ties broken by the others.
 * Also a keyset cursor's condition.
 */
export function rowsAfter(order: OrderKey[], keys: string[], params: unknown[]): string {
  const refs = keys.map((k, i) => {
    params.push(k);
    return `$${params.length}::${order[i]!.type}`;
  });
  const strictly = (i: number): string => {
    const k = order[i]!;
    const step = `${k.expr} ${k.desc ? '<' : '>'} ${refs[i]}`;
    return i === order.length - 1 ? step : `(${step} OR (${k.expr} = ${refs[i]} AND ${strictly(i + 1)}))`;
  };
  const first = order[0]!;
  const range = order.length > 1 ? ` AND ${first.expr} ${first.desc ? '<=' : '>='} ${refs[0]}` : '';
  return `${range} AND ${strictly(0)}`;
}

/**
 * The condition (` AND …`, '' for offset 0) that starts a listing `offset` rows in, to AND into
 * its page's `where` instead of `OFFSET`: the rows before are walked in hops of at most
 * SKIP_PER_STATEMENT, each one statement reading only the sort keys (the last key of the hop),
 * with a turn of the event loop between hops. Past the end, a condition no row meets.
 * Pushes the condition's parameters to `listing.params`. Hops run outside any transaction, as the
 * pages of an offset listing always did: a write between two hops moves the page as it would
 * between two requests.
 */
export async function skipRows(db: Queryable, listing: Listing, offset: number): Promise<string> {
  if (offset <= 0) return '';
  // Read raw in the hop, as text only for the one row it returns (not for each row it skips).
  const keys = listing.order.map((k, i) => `${k.expr} AS k${i}`).join(', ');
  const asText = listing.order.map((_, i) => `k${i}::text AS k${i}`).join(', ');
  let last: string[] | null = null;
  for (let left = offset; left > 0; ) {
    const skip = Math.min(left, SKIP_PER_STATEMENT);
    const params = [...listing.params];
    const from: string = last ? rowsAfter(listing.order, last, params) : '';
    params.push(skip - 1);
    const rows: Record<string, string>[] = await db.query<Record<string, string>>(
      `SELECT ${asText} FROM (SELECT ${keys} FROM ${listing.from} WHERE ${listing.where}${from}
       ORDER BY ${orderBy(listing.order)} OFFSET $${params.length} LIMIT 1) hop`,
      params,
    );
    const row = rows[0];
    if (!row) return ' AND false';
    last = listing.order.map((_, i): string => row[`k${i}`]!);
    left -= skip;
    if (left > 0) await breathe();
  }
  return rowsAfter(listing.order, last!, listing.params);
}
