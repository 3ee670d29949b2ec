import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { consolidateBank } from '../../src/core/consolidate/consolidate.js';
import { EXTRACTIVE_TOKENS } from '../../src/core/reflect/extractive.js';
import { countTokens } from '../../src/text/tokens.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

/** Everyday memories around the one that answers the question. */
const FILLER = [
  'Alice went hiking in the Alps last summer.',
  'Alice is learning to play the piano.',
  'Alice works as a nurse at Mercy Hospital.',
  'Alice prefers tea over coffee in the morning.',
  'Alice visited her grandmother in Porto in March.',
  'Alice reads science fiction novels before bed.',
  'Alice bought a new bicycle for commuting.',
  'Alice is planning a trip to Japan next spring.',
  'Alice volunteers at the animal shelter on weekends.',
  'Alice started a vegetable garden on her balcony.',
  'Alice ran a half marathon in October.',
  'Alice is allergic to peanuts.',
];

for (const engine of ENGINES) {
  describe(`extractive Reflect (${engine})`, () => {
    let t: TestApp;
    const reflect = (bank: string, body: Record<string, unknown>) =>
      t.call('POST', bankPath(bank, '/reflect'), { body });
    const retain = async (bank: string, contents: string[], extra: Record<string, unknown> = {}) => {
      const r = await t.call('POST', bankPath(bank, '/memories'), {
        body: { items: contents.map((content) => ({ content, ...extra })) },
      });
      assert.equal(r.status, 200);
      return r.body.memory_ids as string[];
    };
    const traits = (bank: string, updates: Record<string, number>) =>
      t.call('PATCH', bankPath(bank, '/config'), { body: { updates } });

    before(async () => {
      t = await testApp(engine);
    });
    after(() => t.close());

    test('a question whose answer is in one memory is answered with that memory, first', async () => {
      const [dog] = await retain('alice', ['Alice adopted a beagle named Pepper.'], {
        timestamp: '2024-05-08T13:56:00Z',
      });
      await retain('alice', FILLER);
      const r = await reflect('alice', { query: "What is the name of Alice's dog?" });
      assert.equal(r.status, 200);
      assert.equal(r.body.mode, 'extractive');
      assert.equal(r.body.text, r.body.response);
      const lines = r.body.response.split('\n');
      assert.match(lines[0], /^From \d+ memor(y|ies):$/);
      assert.equal(lines[1], '- Alice adopted a beagle named Pepper. (2024-05-08, world)');
      assert.equal(r.body.based_on.memories[0].id, dog);
      assert.deepEqual(r.body.based_on.observations, []);
      assert.ok(r.body.usage.tokens_used >= countTokens(r.body.response));
      assert.equal(r.body.structured_output, undefined);
    });

    test('applicable directives are reported; response_schema needs a model', async () => {
      await t.call('POST', bankPath('alice', '/directives'), { body: { text: 'Be kind.' } });
      await t.call('POST', bankPath('alice', '/directives'), {
        body: { text: 'Sales only.', tags: ['sales'] },
      });
      const r = await reflect('alice', { query: 'Where does Alice work?' });
      assert.deepEqual(
        r.body.based_on.directives.map((d: { text: string }) => d.text),
        ['Be kind.'],
      );
      const schema = await reflect('alice', {
        query: 'Where does Alice work?',
        response_schema: { type: 'object' },
      });
      assert.equal(schema.status, 422);
      assert.equal(schema.body.error.code, 'llm_required');
    });

    test('restatements appear once; high skepticism marks single-source and conflicting statements', async () => {
      const bank = 'skeptic';
      await retain(bank, ['Bob lives in Lisbon.', 'Bob lives in Lisbon', 'Bob lives in Porto.']);
      await retain(bank, ['Bob has a cat called Miso.']);
      const trusting = await reflect(bank, { query: 'Where does Bob live?' });
      const lisbon = trusting.body.response
        .split('\n')
        .filter((l: string) => l.startsWith('- Bob lives in Lisbon'));
      assert.equal(lisbon.length, 1, trusting.body.response);
      assert.match(trusting.body.response, /stated 2 times/);

      await traits(bank, { disposition_skepticism: 1 });
      const naive = await reflect(bank, { query: 'Where does Bob live?' });
      assert.doesNotMatch(naive.body.response, /single source|conflict/);

      await traits(bank, { disposition_skepticism: 5 });
      const skeptical = await reflect(bank, { query: 'Where does Bob live?' });
      assert.match(skeptical.body.response, /The memories disagree/);
      assert.match(
        skeptical.body.response,
        /Bob lives in Porto\. \([^)]*\) \[conflicts with "Bob lives in Lisbon\.?"/,
      );
      assert.match(skeptical.body.response, /\[single source\]/);
    });

    test('consolidated observations come first-hand with their proof, and their memories are folded in', async () => {
      const bank = 'observed';
      const ids = await retain(bank, [
        'Carol works as a pharmacist in Leeds.',
        'Carol works as a pharmacist in Leeds',
        'Carol plays tennis on Thursdays.',
      ]);
      await consolidateBank(t.services, 'default', bank);
      const r = await reflect(bank, { query: 'What is Carol’s job?' });
      assert.equal(r.body.based_on.observations.length, 1);
      const obs = r.body.based_on.observations[0];
      assert.equal(obs.proof_count, 2);
      assert.deepEqual([...obs.source_memory_ids].sort(), [ids[0], ids[1]].sort());
      assert.equal(obs.contradicted, false);
      assert.match(
        r.body.response,
        /- Carol works as a pharmacist in Leeds\.? \(observation from 2 memories/,
      );
      assert.ok(!r.body.based_on.memories.some((m: { id: string }) => m.id === ids[0] || m.id === ids[1]));
      assert.equal(r.body.response.split('\n').filter((l: string) => l.includes('pharmacist')).length, 1);
    });

    test('literalism narrows the answer; the budget bounds its length', async () => {
      const bank = 'literal';
      await retain(bank, FILLER);
      await traits(bank, { disposition_literalism: 5 });
      const literal = await reflect(bank, { query: 'What does Alice do on weekends?' });
      assert.ok(literal.body.based_on.memories.length <= 3);
      assert.match(literal.body.response, /animal shelter on weekends/);
      await traits(bank, { disposition_literalism: 1 });
      const flexible = await reflect(bank, { query: 'What does Alice do on weekends?' });
      assert.ok(flexible.body.based_on.memories.length > literal.body.based_on.memories.length);

      const long =
        'Alice wrote a long diary entry about her day at the hospital and the patients she met. '.repeat(6);
      await retain(
        'verbose',
        Array.from({ length: 30 }, (_, i) => `${long} Entry ${i}.`),
      );
      const low = await reflect('verbose', { query: 'Alice diary hospital patients', budget: 'low' });
      assert.ok(
        countTokens(low.body.response) <= EXTRACTIVE_TOKENS.low,
        `${countTokens(low.body.response)} tokens`,
      );
      assert.ok(low.body.based_on.memories.length >= 1);
    });

    test('nothing relevant: says so', async () => {
      await retain('empty-ish', ['Zed likes jazz.']);
      const r = await reflect('empty-ish', { query: 'Alice', fact_types: ['procedure'] });
      assert.equal(r.status, 200);
      assert.equal(r.body.response, 'I have no memories that answer this.');
      assert.equal((await reflect('no-such-bank', { query: 'x' })).status, 404);
    });
  });
}
