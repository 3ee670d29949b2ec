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
 * The condition (` AND …`) that a row is one of `keys` (a walk's keys, as text, in `order`'s
 * columns), over parameters it pushes to `params`: a page `walkPage` found, read by its keys.
 */
export function rowsIn(order: OrderKey[], keys: string[][], params: unknown[]): string {
  const refs = order.map((k, i) => {
    params.push(keys.map((row) => row[i]));
    return `$${params.length}::${k.type}[]`;
  });
  return ` AND (${order.map((k) => k.expr).join(', ')}) IN (SELECT * FROM unnest(${refs.join(', ')}))`;
}

/**
 * Pays for `hops` statements of a walk before they run, each reading up to SKIP_PER_STATEMENT
 * rows (a budget's charge, issue 18); throws to refuse them. The first statement of a walk is free.
 */
export type PayHops = (hops: number) => Promise<void>;

/** The keys (as text) of the row `skip` rows on from the row of `last` (the start when null), or null. */
async function hop(
  db: Queryable,
  listing: Listing,
  last: string[] | null,
  skip: number,
): Promise<string[] | null> {
  // Read raw in the hop, as text only for the one row it returns (not for each row it skips).
  const keys = listing.order.map((k, i) => `${k.expr} AS k${i}`).join(', ');
  const asText = listing.order.map((_, i) => `k${i}::text AS k${i}`).join(', ');
  const params = [...listing.params];
  const from = last ? rowsAfter(listing.order, last, params) : '';
  params.push(skip - 1);
  const rows = await db.query<Record<string, string>>(
    `SELECT ${asText} FROM (SELECT ${keys} FROM ${listing.from} WHERE ${listing.where}${from}
     ORDER BY ${orderBy(listing.order)} OFFSET $${params.length} LIMIT 1) hop`,
    params,
  );
  const row = rows[0];
  return row ? listing.order.map((_, i): string => row[`k${i}`]!) : null;
}

/**
 * The condition (` AND …`, '' for offset 0) that starts a listing `offset` rows in, to AND into
 * its page's `where` instead of `OFFSET`: the rows before are walked in hops of at most
 * SKIP_PER_STATEMENT, each one statement reading only the sort keys (the last key of the hop),
 * with a turn of the event loop between hops. Past the end, a condition no row meets.
 * Pushes the condition's parameters to `listing.params`. Hops run outside any transaction, as the
 * pages of an offset listing always did: a write between two hops moves the page as it would
 * between two requests. `pay` is asked for one hop per whole SKIP_PER_STATEMENT rows of `offset`
 * before the first hop runs.
 */
export async function skipRows(
  db: Queryable,
  listing: Listing,
  offset: number,
  pay?: PayHops,
): Promise<string> {
  if (offset <= 0) return '';
  const dear = Math.floor(offset / SKIP_PER_STATEMENT);
  if (dear > 0) await pay?.(dear);
  let last: string[] | null = null;
  for (let left = offset; left > 0; ) {
    const skip = Math.min(left, SKIP_PER_STATEMENT);
    last = await hop(db, listing, last, skip);
    if (!last) return ' AND false';
    left -= skip;
    if (left > 0) await breathe();
  }
  return rowsAfter(listing.order, last!, listing.params);
}

/**
 * The last row of a hop (rows `k0`, `k1`… in the listing's order), in the statement that reads
 * the hop: its keys as text, each the first in the reversed order.
 */
function lastKeysOf(order: OrderKey[]): string {
  const reversed = order.map((k, i) => `k${i}${k.desc ? '' : ' DESC'}`).join(', ');
  return order.map((_, i) => `(array_agg(k${i}::text ORDER BY ${reversed}))[1] AS k${i}`).join(', ');
}

/**
 * How many rows of the listing meet `filter` (a condition over its `from` that pushes its own
 * parameters to the list it is given; every row when null),
 * counted in hops of at most SKIP_PER_STATEMENT rows in the listing's order, whatever the filter
 * keeps: a statement reads at most that many of the listing's index entries, and the event loop
 * turns between two. Each hop after the first is paid for (`pay(1)`) before it runs, so a count
 * over n rows costs floor(n / SKIP_PER_STATEMENT). Outside any transaction, like `skipRows`: a
 * write during the count may be counted or not.
 */
export async function countRows(
  db: Queryable,
  listing: Listing,
  filter: ((params: unknown[]) => string) | null,
  pay?: PayHops,
): Promise<number> {
  const keys = listing.order.map((k, i) => `${k.expr} AS k${i}`).join(', ');
  const lastKeys = lastKeysOf(listing.order);
  let n = 0;
  let last: string[] | null = null;
  for (;;) {
    const params = [...listing.params];
    const kept = filter ? filter(params) : 'true';
    const from = last ? rowsAfter(listing.order, last, params) : '';
    params.push(SKIP_PER_STATEMENT);
    const rows = await db.query<Record<string, string> & { seen: number; n: number }>(
      `SELECT count(*)::int AS seen, count(*) FILTER (WHERE kept)::int AS n, ${lastKeys}
         FROM (SELECT ${kept} AS kept, ${keys} FROM ${listing.from} WHERE ${listing.where}${from}
               ORDER BY ${orderBy(listing.order)} LIMIT $${params.length}) hop`,
      params,
    );
    const row = rows[0]!;
    n += row.n;
    if (row.seen < SKIP_PER_STATEMENT) return n;
    last = listing.order.map((_, i): string => row[`k${i}`]!);
    await pay?.(1);
    await breathe();
  }
}

/**
 * The keys (as text, in the listing's order) of a filtered page: the `want` rows meeting `filter`
 * (a condition over the listing's `from` that pushes its own parameters) after the first `offset`
 * of them. A single statement would read the listing until it found them: with a filter that
 * matches nothing, the whole bank. Walked instead in hops over the listing's index, the filter
 * applied inside each hop, one statement each, with a turn of the event loop between: the first
 * hop reads `offset + want` rows (all of them when every row matches, as the single statement
 * did), each next one twice as many, up to SKIP_PER_STATEMENT. The walk pays (`pay`) one unit per
 * whole SKIP_PER_STATEMENT rows it has read, before the next hop runs: floor(n / SKIP_PER_STATEMENT)
 * for n rows walked, as a counted total. Outside any transaction, like `skipRows`.
 */
export async function walkPage(
  db: Queryable,
  listing: Listing,
  filter: (params: unknown[]) => string,
  offset: number,
  want: number,
  pay?: PayHops,
): Promise<string[][]> {
  const keys = listing.order.map((k, i) => `${k.expr} AS k${i}`).join(', ');
  const inOrder = listing.order.map((k, i) => `k${i}${k.desc ? ' DESC' : ''}`).join(', ');
  const lastKeys = lastKeysOf(listing.order);
  const found: string[][] = [];
  let skip = offset;
  let last: string[] | null = null;
  let size = Math.min(SKIP_PER_STATEMENT, Math.max(offset + want, 1));
  let walked = 0;
  let paid = 0;
  for (;;) {
    // A unit per whole SKIP_PER_STATEMENT rows walked, paid before the next hop (as `countRows`).
    const owed = Math.floor(walked / SKIP_PER_STATEMENT);
    if (owed > paid) await pay?.(owed - paid);
    paid = owed;
    const params = [...listing.params];
    const kept = filter(params);
    const from = last ? rowsAfter(listing.order, last, params) : '';
    params.push(size, skip + 1, skip + want - found.length);
    const [lo, hi] = [params.length - 1, params.length];
    const hits = listing.order
      .map(
        (_, i) => `(array_agg(k${i}::text ORDER BY ${inOrder}) FILTER (WHERE kept))[$${lo}:$${hi}] AS h${i}`,
      )
      .join(', ');
    const rows = await db.query<Record<string, string & string[]> & { seen: number; n: number }>(
      `SELECT count(*)::int AS seen, count(*) FILTER (WHERE kept)::int AS n, ${lastKeys}, ${hits}
         FROM (SELECT ${kept} AS kept, ${keys} FROM ${listing.from} WHERE ${listing.where}${from}
               ORDER BY ${orderBy(listing.order)} LIMIT $${params.length - 2}) hop`,
      params,
    );
    const row = rows[0]!;
    const got = row.h0 ?? [];
    for (let j = 0; j < got.length; j++) found.push(listing.order.map((_, i): string => row[`h${i}`]![j]!));
    skip = Math.max(0, skip - row.n);
    walked += row.seen;
    if (found.length >= want || row.seen < size) return found;
    last = listing.order.map((_, i): string => row[`k${i}`]!);
    size = Math.min(SKIP_PER_STATEMENT, size * 2);
    await breathe();
  }
}

/** A partial aggregate of one hop's kept rows, merged across hops in JS. */
export type Aggregate =
  /** How many rows. */
  | { fn: 'count' }
  /** How many rows `expr` (a condition) holds for. */
  | { fn: 'countIf'; expr: string }
  /** The greatest `expr` (null over no row or only nulls). */
  | { fn: 'max'; expr: string };

/** What `groupRows` groups and aggregates: named group columns, named aggregates, a filter. */
export interface Grouping<G extends string, A extends string> {
  group: Record<G, string>;
  aggregates: Record<A, Aggregate>;
  /** Rows kept (a condition over the listing's `from`, pushing its parameters); every row when absent. */
  filter?: (params: unknown[]) => string;
}

const merge = (a: Aggregate, x: unknown, y: unknown): unknown => {
  if (a.fn !== 'max') return (x as number) + (y as number);
  if (x === null || x === undefined) return y;
  if (y === null || y === undefined) return x;
  return (y as number | Date) > (x as number | Date) ? y : x;
};

/**
 * `SELECT <group>, <aggregates> FROM <from> WHERE <where> AND <filter> GROUP BY <group>`, but
 * computed in hops of at most SKIP_PER_STATEMENT rows in the listing's order (each hop one
 * statement grouping its own rows), the partial aggregates merged here, with a turn of the event
 * loop between hops; each hop after the first is paid for (`pay(1)`) before it runs, as in
 * `countRows`. The groups come in no particular order. Outside any transaction: a write during
 * the walk may be counted or not.
 */
export async function groupRows<G extends string, A extends string>(
  db: Queryable,
  listing: Listing,
  grouping: Grouping<G, A>,
  pay?: PayHops,
): Promise<(Record<G, unknown> & Record<A, unknown>)[]> {
  const groupNames = Object.keys(grouping.group) as G[];
  const aggNames = Object.keys(grouping.aggregates) as A[];
  const keys = listing.order.map((k, i) => `${k.expr} AS k${i}`);
  const lastKeys = lastKeysOf(listing.order);
  const groupCols = groupNames.map((g, i) => `${grouping.group[g]} AS g${i}`);
  const valueCols = aggNames.flatMap((a, i) => {
    const agg = grouping.aggregates[a];
    return agg.fn === 'count' ? [] : [`${agg.expr} AS v${i}`];
  });
  const outGroups = groupNames.map((g, i) => `g${i} AS "${g}"`);
  const outAggs = aggNames.map((a, i) => {
    const agg = grouping.aggregates[a];
    if (agg.fn === 'count') return `count(*)::int AS "${a}"`;
    if (agg.fn === 'countIf') return `count(*) FILTER (WHERE v${i})::int AS "${a}"`;
    return `max(v${i}) AS "${a}"`;
  });
  const groupBy = groupNames.length > 0 ? ` GROUP BY ${groupNames.map((_, i) => `g${i}`).join(', ')}` : '';
  const merged = new Map<string, Record<string, unknown>>();
  let last: string[] | null = null;
  for (;;) {
    const params = [...listing.params];
    const kept = grouping.filter ? grouping.filter(params) : 'true';
    const from = last ? rowsAfter(listing.order, last, params) : '';
    params.push(SKIP_PER_STATEMENT);
    const rows = await db.query<Record<string, unknown> & { seen: number }>(
      `WITH hop AS MATERIALIZED (
         SELECT ${[`${kept} AS kept`, ...keys, ...groupCols, ...valueCols].join(', ')}
           FROM ${listing.from} WHERE ${listing.where}${from}
          ORDER BY ${orderBy(listing.order)} LIMIT $${params.length}),
       edge AS (SELECT count(*)::int AS seen, ${lastKeys} FROM hop)
       SELECT edge.*, part.* FROM edge LEFT JOIN (
         SELECT ${[...outGroups, ...outAggs].join(', ')} FROM hop WHERE kept${groupBy}) part ON true`,
      params,
    );
    for (const row of rows) {
      if (row[aggNames[0]!] === null || row[aggNames[0]!] === undefined) continue;
      const id = JSON.stringify(groupNames.map((g) => row[g]));
      const had = merged.get(id);
      if (!had) {
        merged.set(id, Object.fromEntries([...groupNames, ...aggNames].map((c) => [c, row[c]])));
        continue;
      }
      for (const a of aggNames) had[a] = merge(grouping.aggregates[a], had[a], row[a]);
    }
    const edge = rows[0]!;
    if (edge.seen < SKIP_PER_STATEMENT) break;
    last = listing.order.map((_, i): string => edge[`k${i}`] as string);
    await pay?.(1);
    await breathe();
  }
  return [...merged.values()] as (Record<G, unknown> & Record<A, unknown>)[];
}
