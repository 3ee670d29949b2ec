import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';
import pg from 'pg';
import { parseTimestamptz } from '../../src/store/pg-timestamp.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';

// The driver's parser itself, loaded apart from pg's type registry (which ours replaces).
const postgresDate = createRequire(import.meta.url)('postgres-date') as (v: string) => unknown;

/** Same value and same kind: a Date's time, or the number/null postgres-date returns. */
function same(v: string) {
  const ours = parseTimestamptz(v);
  const theirs = postgresDate(v);
  if (theirs instanceof Date) {
    assert.ok(ours instanceof Date, v);
    assert.equal(ours.getTime(), theirs.getTime(), v);
  } else {
    assert.deepEqual(ours, theirs, v);
  }
}

/** A seeded generator, so that a failure names a string it will find again. */
function seeded(seed: number) {
  let s = seed >>> 0;
  return (n: number) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % n;
  };
}

const pad = (n: number, w: number) => String(n).padStart(w, '0');

describe('timestamptz parsing', () => {
  test('the quick path gives postgres-date’s Date for every fraction length and digit', () => {
    const next = seeded(20);
    for (let i = 0; i < 50_000; i++) {
      const base = `${pad(1000 + next(9000), 4)}-${pad(1 + next(12), 2)}-${pad(1 + next(28), 2)} ${pad(next(24), 2)}:${pad(next(60), 2)}:${pad(next(60), 2)}`;
      const k = next(7);
      const fraction = k ? `.${pad(next(10 ** k), k)}` : '';
      same(`${base}${fraction}+00`);
    }
    // Every millisecond's fractions whose product with 1000 lands just under an integer.
    for (let ms = 0; ms < 1000; ms++) same(`2026-11-27 23:05:08.${pad(ms, 3)}+00`);
    for (let us = 0; us < 1_000_000; us += 7) same(`2026-11-27 23:05:08.${pad(us, 6)}+00`);
  });

  test('every other form is postgres-date’s', () => {
    for (const v of [
      '0044-03-15 00:00:00+00 BC',
      '0005-01-01 00:00:00+00',
      '0999-12-31 23:59:59.999999+00',
      '2026-11-27 23:05:08.698181+05:30',
      '2026-11-27 23:05:08-08',
      '2026-11-27 23:05:08.5+00:00',
      '12026-11-27 23:05:08+00',
      'infinity',
      '-infinity',
      '2026-11-27',
      '2026-1x-27 23:05:08+00',
      '2026-11-27T23:05:08+00',
    ]) {
      same(v);
    }
  });

  test('what the server sends reads back as the instant it stored', {
    skip: ENGINES.includes('postgres') ? false : 'needs MNEMO_TEST_DATABASE_URL',
  }, async () => {
    const { db, dispose } = await openTestDb('postgres');
    try {
      const rows = await db.query<{ at: Date; ms: number }>(
        `SELECT t AS at, (extract(epoch FROM date_trunc('milliseconds', t)) * 1000)::float8 AS ms
         FROM (VALUES (timestamptz '2026-11-27 23:05:08.698181+00'), (timestamptz '1999-01-01 00:00:00+00'),
                      (timestamptz '2026-06-30 12:00:00.1+02')) v(t)`,
      );
      assert.equal(rows.length, 3);
      assert.equal(pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text'), parseTimestamptz);
      for (const r of rows) {
        assert.ok(r.at instanceof Date);
        assert.equal(r.at.getTime(), r.ms);
      }
    } finally {
      await dispose();
    }
  });
});
