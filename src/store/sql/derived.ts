import type { Queryable } from '../db.js';

/** Observations derived from memories that go, and the memories behind them consolidated again. */

/**
 * Observations written from `own` (as proof or as a conflict) hold what those memories said:
 * they go with them, and `redo` is the other memories behind them, to be consolidated again.
 */
export async function derivedObservations(
  tx: Queryable,
  projectId: string,
  bankId: string,
  own: string[],
): Promise<{ observations: string[]; redo: string[] }> {
  const observations = (
    await tx.query<{ id: string }>(
      `SELECT DISTINCT observation_id::text AS id FROM observation_sources
       WHERE project_id = $1 AND bank_id = $2 AND memory_id = ANY($3::uuid[]) AND observation_id <> ALL($3::uuid[])`,
      [projectId, bankId, own],
    )
  ).map((r) => r.id);
  const redo = (
    await tx.query<{ id: string }>(
      `SELECT DISTINCT memory_id::text AS id FROM observation_sources
       WHERE project_id = $1 AND bank_id = $2 AND observation_id = ANY($3::uuid[]) AND memory_id <> ALL($4::uuid[])`,
      [projectId, bankId, observations, [...own, ...observations]],
    )
  ).map((r) => r.id);
  return { observations, redo };
}

/** Marks memories for the next consolidation run, whatever their seq (see consolidation_redo). */
export async function redoConsolidation(
  tx: Queryable,
  projectId: string,
  bankId: string,
  redo: string[],
): Promise<void> {
  if (redo.length === 0) return;
  await tx.query(
    `INSERT INTO consolidation_redo (project_id, bank_id, memory_id)
     SELECT $1, $2, r FROM unnest($3::uuid[]) AS r ON CONFLICT DO NOTHING`,
    [projectId, bankId, redo],
  );
}
