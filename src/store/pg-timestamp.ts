import pg from 'pg';

/** The driver's own timestamptz parser (postgres-date), for every form the quick path leaves. */
const general = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text') as (v: string) => unknown;

const [PLUS, MINUS, SPACE, COLON, DOT, ZERO] = [...'+- :.0'].map((c) => c.charCodeAt(0)) as [
  number,
  number,
  number,
  number,
  number,
  number,
];

/** The digits of `v` from `from` to `to` (exclusive) as a number, or -1 if one is not a digit. */
function digits(v: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = v.charCodeAt(i) - ZERO;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/**
 * A timestamptz as the server sends it to a UTC session (`2026-11-27 23:05:08.698181+00`), read
 * by position instead of postgres-date's regular expressions and substrings: a Recall decodes
 * ~500 of them (100 candidates, 5 timestamps each). The Date is the one postgres-date makes, to
 * the millisecond: the fraction is its digits over their power of ten, which is the double
 * `parseFloat('.698181')` gives (both are the correctly rounded quotient), times 1000, truncated
 * by `Date.UTC`. Any other form (another time zone's offset, a year before 1000, BC, infinity)
 * goes to postgres-date.
 */
export function parseTimestamptz(v: string): unknown {
  const n = v.length;
  // 22 characters without a fraction; a fraction is a dot and 1 to 6 digits.
  if (n < 22 || n > 29 || n === 23) return general(v);
  if (
    v.charCodeAt(n - 3) !== PLUS ||
    v.charCodeAt(n - 2) !== ZERO ||
    v.charCodeAt(n - 1) !== ZERO ||
    v.charCodeAt(0) === ZERO ||
    v.charCodeAt(4) !== MINUS ||
    v.charCodeAt(7) !== MINUS ||
    v.charCodeAt(10) !== SPACE ||
    v.charCodeAt(13) !== COLON ||
    v.charCodeAt(16) !== COLON ||
    (n > 22 && v.charCodeAt(19) !== DOT)
  ) {
    return general(v);
  }
  const year = digits(v, 0, 4);
  const month = digits(v, 5, 7);
  const day = digits(v, 8, 10);
  const hour = digits(v, 11, 13);
  const minute = digits(v, 14, 16);
  const second = digits(v, 17, 19);
  const fraction = n > 22 ? digits(v, 20, n - 3) : 0;
  if ((year | month | day | hour | minute | second | fraction) < 0) return general(v);
  const ms = n > 22 ? 1000 * (fraction / 10 ** (n - 23)) : 0;
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms));
}
