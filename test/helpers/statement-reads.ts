/**
 * What a store's statements read: each statement it sent, whether the event loop turned since
 * the one before, and the most rows one of them read (EXPLAIN ANALYZE of the very statement).
 */
import type { Db } from '../../src/store/db.js';
import type { Store } from '../../src/store/store.js';
import { watchedStore } from './watched-store.js';

export interface Sent {
  sql: string;
  params: unknown[];
  /** The event loop turned between the statement before and this one. */
  turned: boolean;
}

/** A store over `db` that adds every statement it runs to `seen`. */
export function turnWatchedStore(db: Db, seen: Sent[]): Store {
  let turned = true;
  return watchedStore(db, (sql, params) => {
    seen.push({ sql, params, turned });
    turned = false;
    setImmediate(() => {
      turned = true;
    });
  });
}

interface PlanNode {
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/**
 * The most rows any step of the plan produced or threw away: what the statement read at most.
 * PostgreSQL 15 shows a step run in loops with its rows per loop rounded to a whole number (the
 * tags of 2,780 memories, 1.8 each, show as 2 × 2,780): the least count that rounding allows.
 */
function rowsRead(node: PlanNode): number {
  const loops = node['Actual Loops'] ?? 1;
  const perLoop = (node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0);
  const own = loops > 1 ? Math.max(0, perLoop - 0.5) * loops : perLoop;
  return Math.max(own, ...(node.Plans ?? []).map(rowsRead));
}

/**
 * The most rows a step of `sql`'s plan reads, run again under EXPLAIN ANALYZE with scans of whole
 * tables ruled out: the statement's shape, not the planner's choice over a small table (as at a
 * million rows, it must read its hop only).
 */
export async function mostRowsRead(db: Db, sql: string, params: unknown[]): Promise<number> {
  const [row] = await db.transaction(async (tx) => {
    await tx.exec('SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;');
    return tx.query<Record<string, unknown>>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params);
  });
  const json = Object.values(row!)[0];
  const plan = (typeof json === 'string' ? JSON.parse(json) : json) as { Plan: PlanNode }[];
  return rowsRead(plan[0]!.Plan);
}
