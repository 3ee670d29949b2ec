/**
 * Answer types: a question that asks for a quantity ("how many", "how much ... spend", "in total")
 * ranks the memories that state one (a number; an amount of money when money is asked about)
 * above those that only share its words.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

const BRIGHT = 'My bike lights are really bright and my bike is blue.';
const PRICED = 'My bike lights cost me $40 and my bike is blue.';
const PLAIN = 'I keep my bikes in the garage, and I keep the bikes clean.';
const COUNTED = 'I keep two bikes in the shed.';

for (const engine of ENGINES) {
  describe(`answer types (${engine})`, () => {
    let t: TestApp;
    const recall = async (query: string) => {
      const r = await t.call('POST', bankPath('answer-type', '/memories/recall'), { body: { query } });
      assert.equal(r.status, 200);
      return r.body.results as { text: string; scores: { reranker: number } }[];
    };
    before(async () => {
      t = await testApp(engine);
      const items = [BRIGHT, PRICED, PLAIN, COUNTED].map((content) => ({ content }));
      assert.equal(
        (await t.call('POST', bankPath('answer-type', '/memories'), { body: { items } })).status,
        200,
      );
    });
    after(() => t.close());

    test('a question about money puts the memory with an amount first', async () => {
      const results = await recall('How much money did I spend on bike lights?');
      assert.equal(results[0]!.text, PRICED);
    });

    test('the same words without a quantity asked do not favour it', async () => {
      const asked = await recall('How much money did I spend on bike lights?');
      const plain = await recall('Tell me about my bike lights');
      const margin = (rs: typeof asked) =>
        rs.find((r) => r.text === PRICED)!.scores.reranker -
        rs.find((r) => r.text === BRIGHT)!.scores.reranker;
      assert.ok(margin(asked) > margin(plain) + 0.05, `${margin(asked)} vs ${margin(plain)}`);
    });

    test('"how many" puts the memory with a number above one with more of the words', async () => {
      const results = await recall('How many bikes do I keep?');
      const rank = (text: string) => results.findIndex((r) => r.text === text);
      assert.ok(rank(COUNTED) >= 0 && rank(COUNTED) < rank(PLAIN), results.map((r) => r.text).join(' | '));
    });
  });
}
