/**
 * What a question asks for, read from its form: "how many days ago…" and "which … first, A or B?"
 * are worked out from when things happened (the dated memory of the event is wanted, not one that
 * states some number); a request for advice ("can you suggest…") is about its topic, not about
 * the other requests of the history that share its request words.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { analyzeQuery } from '../../src/core/recall/query.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

const DATED = 'I bought a smoker today.';
const NUMBERED = 'I bought a smoker, and then I bought 3 bags of wood for the smoker.';
const OTHER_REQUEST =
  'Can you suggest something for a rainy day? Any suggestions? I would love a suggestion.';
const TOPIC = 'My commute is 40 minutes each way on the train.';
// A stated taste (fact type `preference`) and a shorter memory with the same words.
const WORLD = 'A movie marathon is on.';
const TASTE = 'I love a movie marathon.';

for (const engine of ENGINES) {
  describe(`query intent (${engine})`, () => {
    let t: TestApp;
    const recall = async (query: string, bank = 'intent') => {
      const r = await t.call('POST', bankPath(bank, '/memories/recall'), {
        body: { query, query_timestamp: '2023-03-20T12:00:00Z' },
      });
      assert.equal(r.status, 200);
      return (r.body.results as { text: string }[]).map((x) => x.text);
    };
    before(async () => {
      t = await testApp(engine);
      const items = [
        { content: DATED, timestamp: '2023-03-10T15:00:00Z' },
        { content: NUMBERED, timestamp: '2023-03-12T15:00:00Z' },
        { content: OTHER_REQUEST, timestamp: '2023-03-13T15:00:00Z' },
        { content: TOPIC, timestamp: '2023-03-14T15:00:00Z' },
      ];
      assert.equal((await t.call('POST', bankPath('intent', '/memories'), { body: { items } })).status, 200);
      const tastes = [WORLD, TASTE].map((content) => ({ content, timestamp: '2023-03-10T15:00:00Z' }));
      const retained = await t.call('POST', bankPath('taste', '/memories'), { body: { items: tastes } });
      assert.equal(retained.status, 200);
    });
    after(() => t.close());

    test('"how many days ago" wants the dated memory of the event, not a number', async () => {
      const results = await recall('How many days ago did I buy a smoker?');
      assert.equal(results[0], DATED, results.join(' | '));
    });

    test('a plain "how many" still wants the memory that states a number', async () => {
      const results = await recall('How many bags of wood did I buy for the smoker?');
      assert.equal(results[0], NUMBERED, results.join(' | '));
    });

    test('what each form of question asks for', async () => {
      const asks = async (query: string) => {
        const q = await analyzeQuery(t.services, query, new Date('2023-03-20T12:00:00Z'), undefined);
        return { when: q.asksWhen, quantity: q.asksQuantity };
      };
      // Elapsed time: worked out from dates alone.
      assert.deepEqual(await asks('How many days had passed between the fair and the concert?'), {
        when: true,
        quantity: null,
      });
      // A duration "when/after" something: a stated number can answer too.
      assert.deepEqual(await asks('How many days did it take to arrive after I ordered it?'), {
        when: true,
        quantity: 'number',
      });
      assert.deepEqual(await asks('Which did I visit first, the zoo or the aquarium?'), {
        when: true,
        quantity: null,
      });
      // An order of purchase is not an order in time.
      assert.deepEqual(await asks('Was my first order from the bakery cheaper than the second?'), {
        when: false,
        quantity: null,
      });
      assert.deepEqual(await asks('How many books did I buy?'), { when: false, quantity: 'number' });
      const windowOf = async (query: string) =>
        (await analyzeQuery(t.services, query, new Date('2023-03-20T12:00:00Z'), undefined)).window;
      // Asked today, "before today" holds the whole history: no window. "Before 2020" is one.
      assert.equal(await windowOf('Which airlines did I fly with before today?'), null);
      assert.equal(
        (await windowOf('Which airlines did I fly with before 2020?'))?.end.toISOString().slice(0, 4),
        '2020',
      );
      const terms = async (query: string) =>
        (await analyzeQuery(t.services, query, new Date(), undefined)).terms;
      assert.deepEqual(await terms('Can you suggest some useful accessories for my phone?'), [
        'accessori',
        'phone',
      ]);
      // Not addressed to the assistant: the words are the topic.
      assert.deepEqual(await terms('What did Melanie recommend?'), ['melani', 'recommend']);
      // Nothing but request words: they stay.
      assert.deepEqual(await terms('Any suggestions?'), ['suggest']);
    });

    test('a request for advice finds its topic, not other requests', async () => {
      const results = await recall('Can you suggest some things to do on my commute?');
      assert.equal(results[0], TOPIC, results.join(' | '));
    });

    test('a request for advice finds the stated taste first (the taste signal)', async () => {
      const results = await recall('Can you recommend a movie marathon?', 'taste');
      assert.equal(results[0], TASTE, results.join(' | '));
      // The same words, not asking advice: the closer match first.
      assert.equal((await recall('Which movie marathon is on?', 'taste'))[0], WORLD);
    });
  });
}
