import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseEventPair } from './event-pair.js';
import { keywordTerms } from './terms.js';

test('two-event questions: order, the time between, a span until the other event', () => {
  const table: [string, [string, string] | null][] = [
    [
      'Which project did I start first, the Ferrari model or the Japanese Zero fighter plane model?',
      ['project start first Ferrari model', 'project start first Japanese Zero fighter plane model'],
    ],
    [
      'Which seeds were started first, the tomatoes or the marigolds?',
      ['seeds started first tomatoes', 'seeds started first marigolds'],
    ],
    [
      "Which show did I start watching first, 'The Crown' or 'Game of Thrones'?",
      ['show start watching first crown', 'show start watching first game thrones'],
    ],
    [
      'How many days passed between the day I cancelled my FarmFresh subscription and the day I did my online grocery shopping?',
      [
        'how many days passed cancelled FarmFresh subscription',
        'how many days passed online grocery shopping',
      ],
    ],
    // A day named inside an event ("the Sunday mass") leaves the event a phrase.
    [
      "How many days had passed between the Hindu festival of Holi and the Sunday mass at St. Mary's Church?",
      ['how many days passed Hindu festival Holi', "how many days passed Sunday mass St. Mary's Church"],
    ],
    [
      'How long had I been taking guitar lessons when I bought the new guitar amp?',
      ['how long taking guitar lessons', 'how long bought new guitar amp'],
    ],
    [
      'How many days had passed since I started taking ukulele lessons when I decided to service my guitar?',
      ['how many days passed started taking ukulele lessons', 'how many days passed decided service guitar'],
    ],
    // One event, two people, a time range, a plain "or": nothing to split.
    ['When did Caroline go to the LGBTQ support group?', null],
    ['What is the topic of discussion between John and Tim on 11 December, 2023?', null],
    ['Where was John between August 11 and August 15 2023?', null],
    ['Would Caroline rather go hiking or camping?', null],
    ['Which came first, the museum or the museum?', null],
  ];
  for (const [query, want] of table) {
    const got = parseEventPair(query);
    if (want === null) {
      assert.equal(got, null, query);
      continue;
    }
    assert.ok(got, query);
    const terms = (text: string) => [...new Set(keywordTerms(text))].sort();
    assert.deepEqual(
      got.sides.map((side) => [...side].sort()),
      want.map(terms),
      query,
    );
  }
});
