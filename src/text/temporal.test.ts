import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findDates, parseTemporalQuery } from './temporal.js';

// A Friday.
const REF = new Date('2024-03-15T12:00:00Z');

/** [query, start day, end day (exclusive)]; null when no range is expected. */
const table: [string, string, string][] = [
  ['yesterday', '2024-03-14', '2024-03-15'],
  ['What did I do today?', '2024-03-15', '2024-03-16'],
  ['the day before yesterday', '2024-03-13', '2024-03-14'],
  ['last night', '2024-03-14', '2024-03-15'],
  ['3 days ago', '2024-03-12', '2024-03-13'],
  ['two weeks ago', '2024-02-26', '2024-03-04'],
  ['last week', '2024-03-04', '2024-03-11'],
  ['this week', '2024-03-11', '2024-03-18'],
  ['next week', '2024-03-18', '2024-03-25'],
  ['the week before last', '2024-02-26', '2024-03-04'],
  ['last weekend', '2024-03-09', '2024-03-11'],
  ['this weekend', '2024-03-16', '2024-03-18'],
  ['last Friday', '2024-03-08', '2024-03-09'],
  ['next Friday', '2024-03-22', '2024-03-23'],
  ['What did Caroline do on Monday?', '2024-03-11', '2024-03-12'],
  ['last month', '2024-02-01', '2024-03-01'],
  ['a couple of months ago', '2024-01-01', '2024-02-01'],
  ['What did I do last June?', '2023-06-01', '2023-07-01'],
  ['last March', '2023-03-01', '2023-04-01'],
  ['in March', '2024-03-01', '2024-04-01'],
  ['in June', '2023-06-01', '2023-07-01'],
  ['next June', '2024-06-01', '2024-07-01'],
  ['What did I do last May?', '2023-05-01', '2023-06-01'],
  ['May 2023', '2023-05-01', '2023-06-01'],
  ['on 8 May, 2023', '2023-05-08', '2023-05-09'],
  ['1:56 pm on 8 May, 2023', '2023-05-08', '2023-05-09'],
  ['What happened on 5/8/23?', '2023-05-08', '2023-05-09'],
  ['Jan 5', '2024-01-05', '2024-01-06'],
  ['in 2022', '2022-01-01', '2023-01-01'],
  ['last year', '2023-01-01', '2024-01-01'],
  ['10 years ago', '2014-01-01', '2015-01-01'],
  ['early 2022', '2022-01-01', '2022-05-01'],
  ['in the 90s', '1990-01-01', '2000-01-01'],
  ['from 2019 to 2021', '2019-01-01', '2022-01-01'],
  ['between May and July 2023', '2023-05-01', '2023-08-01'],
  ['from June to August', '2023-06-01', '2023-09-01'],
  ['last summer', '2023-06-01', '2023-09-01'],
  ['this winter', '2023-12-01', '2024-03-01'],
  ['this summer', '2024-06-01', '2024-09-01'],
  ['in the summer of 2022', '2022-06-01', '2022-09-01'],
  ['Did I go hiking in the fall?', '2023-09-01', '2023-12-01'],
  ['last Christmas', '2023-12-25', '2023-12-26'],
  ['at Thanksgiving', '2023-11-23', '2023-11-24'],
  ['in the past few weeks', '2024-02-23', '2024-03-16'],
  ['the last 3 days', '2024-03-12', '2024-03-16'],
  ['since 2016', '2016-01-01', '2024-03-16'],
  ['since June 2020', '2020-06-01', '2024-03-16'],
  ['What happened since January?', '2024-01-01', '2024-03-16'],
  ['on the evening of 7 July, 2023', '2023-07-07', '2023-07-08'],
  ['before 2020', '1900-01-01', '2020-01-01'],
];

const day = (d: Date): string => d.toISOString().slice(0, 10);

test('parseTemporalQuery resolves expressions to UTC ranges', () => {
  const wrong = table
    .map(([q, start, end]) => {
      const r = parseTemporalQuery(q, REF);
      return { q, expected: `${start}..${end}`, got: r ? `${day(r.start)}..${day(r.end)}` : null };
    })
    .filter((x) => x.got !== x.expected);
  assert.deepEqual(wrong, []);
});

test('ranges start and end at UTC midnight', () => {
  const r = parseTemporalQuery('yesterday', REF)!;
  assert.equal(r.start.toISOString(), '2024-03-14T00:00:00.000Z');
  assert.equal(r.end.toISOString(), '2024-03-15T00:00:00.000Z');
});

test('the expression is the matched words', () => {
  assert.equal(parseTemporalQuery('What did I do last June?', REF)?.expression, 'last June');
  assert.equal(parseTemporalQuery('What happened on 8 May, 2023?', REF)?.expression, 'on 8 May, 2023');
  assert.equal(parseTemporalQuery('What has she painted since 2016?', REF)?.expression, 'since 2016');
});

test('a range is absolute when the query names a year or a day of a month, relative otherwise', () => {
  const absolute = [
    'What happened on 8 May, 2023?',
    'What did Nate make on 9 November?',
    'What did I do in January 2024?',
    'What has she painted since 2016?',
    'What happened in 2022?',
    'What did we do in the summer of 2021?',
    'What happened in the 90s?',
    'Where was I between 2019 and 2021?',
    'What did I do at Christmas 2022?',
    'What happened in early 2022?',
  ];
  const relative = [
    'yesterday',
    'What did I do last week?',
    'two weeks ago',
    'a couple of days ago',
    'in March',
    'last summer',
    'last Friday',
    'the past few months',
    'last night',
    'last Christmas',
    'What happened between May 2022 and last week?',
  ];
  const wrong = [
    ...absolute.filter((q) => parseTemporalQuery(q, REF)?.absolute !== true),
    ...relative.filter((q) => parseTemporalQuery(q, REF)?.absolute !== false),
  ];
  assert.deepEqual(wrong, []);
});

test('no date, no range', () => {
  for (const q of [
    'When did Melanie paint a sunrise?',
    'recently',
    'What is Caroline doing right now?',
    'May I ask you something?',
    'We will march on',
    'I sat down in the sun',
    'at 3pm',
    'I ran 2000 meters',
    '',
  ]) {
    assert.equal(parseTemporalQuery(q, REF), null, q);
  }
});

test('an expression anchored on an event has no range', () => {
  // "the wedding" is not a date; chrono alone would read "two weeks before" the reference.
  assert.equal(parseTemporalQuery('What did I do two weeks before the wedding?', REF), null);
  assert.equal(parseTemporalQuery('a week after the party', REF), null);
});

test('a weekday before or after a named date is counted from that date', () => {
  const at = (q: string) => {
    const r = parseTemporalQuery(q, REF)!;
    return [day(r.start), day(r.end), r.expression, r.absolute];
  };
  // 25 October 2022 was a Tuesday; 1 March 2024 a Friday.
  assert.deepEqual(at('What did I do the Sunday before October 25, 2022?'), [
    '2022-10-23',
    '2022-10-24',
    'the Sunday before October 25, 2022',
    true,
  ]);
  assert.deepEqual(at('the Tuesday after October 25, 2022'), [
    '2022-11-01',
    '2022-11-02',
    'the Tuesday after October 25, 2022',
    true,
  ]);
  // No year: the date's latest occurrence, as for the date alone.
  assert.deepEqual(at('the Friday after March 1'), [
    '2024-03-08',
    '2024-03-09',
    'the Friday after March 1',
    true,
  ]);
  assert.deepEqual(at('the Monday before 2024-03-01'), [
    '2024-02-26',
    '2024-02-27',
    'the Monday before 2024-03-01',
    true,
  ]);
  // Anchored on an event, not a date: still no range.
  assert.equal(parseTemporalQuery('the Sunday before the wedding', REF), null);
});

test('future tense moves a bare weekday forward', () => {
  assert.equal(day(parseTemporalQuery('I went to Paris on Monday', REF)!.start), '2024-03-11');
  assert.equal(day(parseTemporalQuery('I will go to Paris on Monday', REF)!.start), '2024-03-18');
});

test('several expressions give the range covering them', () => {
  const r = parseTemporalQuery('Did I travel in May 2023 or in August 2023?', REF)!;
  assert.equal(`${day(r.start)}..${day(r.end)}`, '2023-05-01..2023-09-01');
});

test('findDates lists dates in memory content against the mention time', () => {
  const text =
    'Caroline: I went to a support group yesterday. Next month I will go to Boston, and last summer I was in Paris.';
  const dates = findDates(text, REF).map((d) => [d.text, day(d.start), day(d.end)]);
  assert.deepEqual(dates, [
    ['yesterday', '2024-03-14', '2024-03-15'],
    ['Next month', '2024-04-01', '2024-05-01'],
    ['last summer', '2023-06-01', '2023-09-01'],
  ]);
  assert.deepEqual(findDates('No dates here.', REF), []);
});

test('findDates: a LoCoMo turn against its session time', () => {
  const said = new Date('2023-05-08T13:56:00Z');
  const [d] = findDates('I went to a LGBTQ support group yesterday and it was so powerful.', said);
  assert.equal(d?.start.toISOString(), '2023-05-07T00:00:00.000Z');
  assert.equal(d?.end.toISOString(), '2023-05-08T00:00:00.000Z');
});

test('results do not depend on the host time zone', () => {
  const saved = process.env.TZ;
  const refs = [REF, new Date('2024-03-15T00:30:00Z'), new Date('2024-03-15T23:30:00Z')];
  const run = (): string =>
    JSON.stringify(refs.flatMap((ref) => table.map(([q]) => parseTemporalQuery(q, ref))));
  try {
    process.env.TZ = 'UTC';
    const utc = run();
    for (const tz of ['America/Los_Angeles', 'Asia/Tokyo', 'Pacific/Honolulu', 'Pacific/Auckland']) {
      process.env.TZ = tz;
      assert.equal(run(), utc, tz);
    }
  } finally {
    if (saved === undefined) delete process.env.TZ;
    else process.env.TZ = saved;
  }
});

test('an invalid reference is rejected', () => {
  assert.throws(() => parseTemporalQuery('yesterday', new Date(Number.NaN)), RangeError);
});

test("chrono's rarer forms still parse: chrono is skipped only for text with no date word in it", () => {
  const ref = new Date('2024-06-15T12:00:00Z');
  for (const q of [
    'what happened 3 mos ago',
    'what is planned tmrw',
    'and overmorrow?',
    'the party on thurs.',
    'sept 5',
    'by the end of month',
    'an hr ago',
    '2h ago',
  ])
    assert.ok(parseTemporalQuery(q, ref), q);
});
