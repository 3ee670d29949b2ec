/**
 * A project's limits and what it has spent, through the operator's API: for the tests of what
 * requests and the jobs they queue cost (test/security/*-cost, the whole-bank walks' charges).
 */
import assert from 'node:assert/strict';
import type { TestApp } from './app.js';

type Caller = Pick<TestApp, 'call'>;

/** Sets `project`'s `limits` as the operator (`null` lifts one). */
export async function setProjectLimits(
  t: Caller,
  project: string,
  limits: Record<string, number | null>,
): Promise<void> {
  const r = await t.call('PATCH', `/v1/default/projects/${project}`, { body: { limits } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

/** The usage the API reports for `project`: every budget's count in its window, and the items retained today. */
export async function projectUsage(t: Caller, project: string): Promise<Record<string, number>> {
  const { usage } = (await t.call('GET', `/v1/default/projects/${project}`)).body;
  return { ...usage.budgets, retained_items_today: usage.retained_items_today };
}

/** The recall units `project` has spent this minute. */
export async function recallUnitsSpent(t: Caller, project: string): Promise<number> {
  return (await projectUsage(t, project)).recall_units_per_minute!;
}
