import type { Queryable } from '../db.js';

/**
 * Takes the bank's row lock, which every writer of its memories takes first (serialising them,
 * so its statistics stay exact), and moves its generation on: Recall answers cached at the old
 * generation are no longer served. Returns the bank's encryption target, or null when there is
 * no such bank.
 */
export async function lockBank(tx: Queryable, projectId: string, bankId: string): Promise<string | null> {
  const rows = await tx.query<{ target: string }>(
    `UPDATE banks SET generation = generation + 1 WHERE project_id = $1 AND id = $2
     RETURNING coalesce(config->>'encryption', 'none') AS target`,
    [projectId, bankId],
  );
  return rows[0]?.target ?? null;
}
