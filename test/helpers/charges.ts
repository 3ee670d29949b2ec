import assert from 'node:assert/strict';
import { bankPath, type TestApp, type TestAppOptions, testApp } from './app.js';
import type { EngineName } from './engines.js';
import { projectWithKey } from './keys.js';
import { setProjectLimits } from './project-usage.js';

/** An item of exactly 100 characters. */
export const item100 = (tag: string) => ({ content: `${tag} ${'x'.repeat(99 - tag.length)}` });

/** The fixed clock of `chargedProject`: every charge and refund falls in one minute's window. */
export const CHARGE_CLOCK = () => new Date(Date.parse('2030-01-01T10:00:05Z'));

/**
 * A test app (over `options.store`, when given) at a fixed clock (every charge and refund falls in one minute's window) with
 * `project` and its key, the Retain budgets set (so they are counted), and 6 items of 100
 * characters charged already: a refund given twice would show below them.
 */
export async function chargedProject(
  engine: EngineName,
  project: string,
  options: TestAppOptions = {},
): Promise<{ t: TestApp; key: string }> {
  const t = await testApp(engine, { ...options, now: CHARGE_CLOCK });
  const key = await projectWithKey(t, project);
  const limits = {
    characters_per_minute: 100_000,
    characters_per_day: 100_000,
    retained_items_per_minute: 1000,
    retained_items_per_day: 1000,
  };
  await setProjectLimits(t, project, limits);
  const seed = await t.call('POST', bankPath('seed', '/memories', '/v1/me'), {
    token: key,
    body: { items: [1, 2, 3, 4, 5, 6].map((i) => item100(`seed${i}`)) },
  });
  assert.equal(seed.status, 200, JSON.stringify(seed.body));
  return { t, key };
}

/** Queues an async Retain of `items` into `bank`; its operation's id. */
export async function queueRetain(t: TestApp, key: string, bank: string, items: { content: string }[]) {
  const q = await t.call('POST', bankPath(bank, '/memories', '/v1/me'), {
    token: key,
    body: { items, async: true },
  });
  assert.equal(q.status, 200, JSON.stringify(q.body));
  return q.body.operation_id as string;
}

/** `before` with `n` more items of 100 characters charged (stored, so kept charged). */
export const plusItems = (before: Record<string, number>, n: number) => ({
  ...before,
  characters_per_minute: before.characters_per_minute! + 100 * n,
  characters_per_day: before.characters_per_day! + 100 * n,
  retained_items_per_minute: before.retained_items_per_minute! + n,
  retained_items_today: before.retained_items_today! + n,
});
