/**
 * PostgreSQL compiles a statement to machine code (JIT) when its estimated cost passes
 * `jit_above_cost`. mnemo's statements are short and index-bounded, but named statements run on
 * generic plans, whose estimates grow with the bank: at 1M memories the keyword function's
 * generic plan was estimated past the threshold, and each call spent ~100 ms compiling for ~3 ms
 * of work (docs/recall.md, "A million memories in one bank"). Every connection of the engine
 * turns JIT off.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Db } from '../../src/store/db.js';
import { openTestDb } from '../helpers/engines.js';

describe('PostgreSQL sessions run without JIT (postgres)', {
  skip: process.env.MNEMO_TEST_DATABASE_URL ? false : 'needs MNEMO_TEST_DATABASE_URL',
}, () => {
  let db: Db;
  let dispose: () => Promise<void>;
  before(async () => {
    ({ db, dispose } = await openTestDb('postgres'));
  });
  after(() => dispose());

  test('a statement estimated past jit_above_cost is not compiled, on every pooled connection', async () => {
    // Four transactions at once hold the pool's four connections.
    const plans = await Promise.all(
      [1, 2, 3, 4].map(() =>
        db.transaction(async (tx) => {
          await tx.exec('SET LOCAL jit_above_cost = 0');
          const rows = await tx.query<{ 'QUERY PLAN': unknown }>(
            'EXPLAIN (ANALYZE, FORMAT JSON) SELECT sum(g) FROM generate_series(1, 1000) g',
          );
          return JSON.stringify(rows[0]!['QUERY PLAN']);
        }),
      ),
    );
    for (const plan of plans) assert.doesNotMatch(plan, /"JIT"/, `compiled: ${plan}`);
    const [row] = await db.query<{ jit: string }>('SHOW jit');
    assert.equal(row!.jit, 'off');
  });
});
