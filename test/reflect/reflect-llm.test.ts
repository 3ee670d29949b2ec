import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { BEHAVIOUR, type Level, TRAITS } from '../../src/core/reflect/disposition.js';
import { createOpenAIModel } from '../../src/llm/openai.js';
import { type FakeOpenAI, openAIError, startFakeOpenAI } from '../fakes/openai-server.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

const BANK = 'alice@example.com';

for (const engine of ENGINES) {
  describe(`Reflect with a language model (${engine})`, () => {
    let t: TestApp;
    let fake: FakeOpenAI;
    const ids: Record<string, string> = {};

    const reflect = (body: Record<string, unknown>) => t.call('POST', bankPath(BANK, '/reflect'), { body });
    const setTraits = (updates: Record<string, number>) =>
      t.call('PATCH', bankPath(BANK, '/config'), {
        body: {
          updates: Object.fromEntries(Object.entries(updates).map(([k, v]) => [`disposition_${k}`, v])),
        },
      });
    /** The system and user prompts of the last chat completion the fake received. */
    const lastPrompt = () => {
      const messages = fake.requests.at(-1)!.body.messages as { role: string; content: string }[];
      return {
        system: messages.find((m) => m.role === 'system')!.content,
        user: messages
          .filter((m) => m.role === 'user')
          .map((m) => m.content)
          .join('\n'),
      };
    };
    const directive = async (body: Record<string, unknown>) => {
      const r = await t.call('POST', bankPath(BANK, '/directives'), { body });
      assert.equal(r.status, 201);
      return r.body.id as string;
    };

    before(async () => {
      fake = await startFakeOpenAI();
      t = await testApp(engine, {
        llm: createOpenAIModel({ baseUrl: fake.url, model: 'fake-model', maxRetries: 0 }),
      });
      const r = await t.call('POST', bankPath(BANK, '/memories'), {
        body: {
          items: [
            {
              content: 'Alice is training for the Berlin marathon in September.',
              timestamp: '2024-03-01T10:00:00Z',
              tags: ['fitness'],
            },
            {
              content: 'Alice hurt her knee while running last week.',
              timestamp: '2024-05-02T10:00:00Z',
              tags: ['fitness'],
            },
            {
              content: 'Alice returned the Pegasus running shoes because they were too narrow.',
              timestamp: '2024-04-10T10:00:00Z',
              tags: ['sales'],
            },
            { content: 'Alice prefers vegetarian restaurants.', timestamp: '2024-01-15T10:00:00Z' },
          ],
        },
      });
      assert.equal(r.status, 200);
      [ids.marathon, ids.knee, ids.shoes, ids.food] = r.body.memory_ids;
      ids.always = await directive({
        text: 'Never give medical diagnoses; suggest seeing a doctor instead.',
        priority: 5,
      });
      ids.sales = await directive({
        text: 'Never recommend a product the customer has returned.',
        tags: ['sales'],
        priority: 9,
      });
      ids.support = await directive({ text: 'Offer a callback from the support team.', tags: ['support'] });
      ids.inactive = await directive({ text: 'Always answer in French.', active: false });
    });
    beforeEach(() => fake.respond());
    after(async () => {
      await t.close();
      await fake.close();
    });

    test('the prompt carries every applicable directive and none of the others', async () => {
      fake.respond(() => ({ content: 'Alice is training for a marathon [m1].' }));
      const r = await reflect({ query: 'What running shoes should I recommend to Alice?', tags: ['sales'] });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const { system } = lastPrompt();
      assert.match(system, /Never give medical diagnoses/);
      assert.match(system, /Never recommend a product the customer has returned/);
      assert.doesNotMatch(system, /callback from the support team/);
      assert.doesNotMatch(system, /answer in French/);
      // Higher priority first.
      assert.ok(system.indexOf('Never recommend a product') < system.indexOf('Never give medical diagnoses'));
      assert.deepEqual(
        r.body.based_on.directives.map((d: { id: string }) => d.id),
        [ids.sales, ids.always],
      );

      // Without the request's tags, the tagged directive does not apply.
      await reflect({ query: 'What running shoes should I recommend to Alice?' });
      const untagged = lastPrompt().system;
      assert.match(untagged, /Never give medical diagnoses/);
      assert.doesNotMatch(untagged, /Never recommend a product/);
    });

    test('the prompt carries the behaviour of the configured disposition levels, and only those', async () => {
      const levels: Record<string, Level> = { skepticism: 5, literalism: 1, empathy: 4 };
      assert.equal((await setTraits(levels)).status, 200);
      fake.respond(() => ({ content: 'An answer.' }));
      assert.equal((await reflect({ query: 'How is Alice doing?' })).status, 200);
      const { system } = lastPrompt();
      for (const trait of TRAITS) {
        for (const level of [1, 2, 3, 4, 5] as Level[]) {
          const present = system.includes(BEHAVIOUR[trait][level]);
          assert.equal(present, level === levels[trait], `${trait} ${level}`);
        }
      }
      assert.match(system, /Skepticism 5\/5/);
      assert.match(system, /Literalism 1\/5/);
      assert.match(system, /Empathy 4\/5/);
    });

    test('changing a trait changes the prompt', async () => {
      fake.respond(() => ({ content: 'An answer.' }));
      await setTraits({ skepticism: 1, literalism: 3, empathy: 3 });
      await reflect({ query: 'How is Alice doing?' });
      const trusting = lastPrompt().system;
      await setTraits({ skepticism: 5 });
      await reflect({ query: 'How is Alice doing?' });
      const skeptical = lastPrompt().system;
      assert.notEqual(trusting, skeptical);
      assert.ok(trusting.includes(BEHAVIOUR.skepticism[1]) && !trusting.includes(BEHAVIOUR.skepticism[5]));
      assert.ok(skeptical.includes(BEHAVIOUR.skepticism[5]) && !skeptical.includes(BEHAVIOUR.skepticism[1]));
      // Only the skepticism line differs.
      const line = (p: string, trait: string) => p.split('\n').find((l) => l.startsWith(`- ${trait}`));
      assert.equal(line(trusting, 'Empathy'), line(skeptical, 'Empathy'));
      assert.notEqual(line(trusting, 'Skepticism'), line(skeptical, 'Skepticism'));
    });

    test('identity, context and the recalled memories reach the prompt; the answer and usage come back', async () => {
      const identity = await t.call('PATCH', bankPath(BANK), {
        body: {
          name: 'Coach Ada',
          mission: 'Keep Alice healthy and motivated through her marathon training.',
        },
      });
      assert.equal(identity.status, 200);
      assert.equal(identity.body.name, 'Coach Ada');
      assert.equal(
        (await t.call('GET', bankPath(BANK))).body.mission,
        'Keep Alice healthy and motivated through her marathon training.',
      );
      fake.respond(() => ({ content: '  Alice is preparing for the Berlin marathon [m1].  ' }));
      const r = await reflect({
        query: 'What is Alice training for?',
        context: 'The user is her physiotherapist.',
        fact_types: ['world', 'experience'],
        budget: 'low',
      });
      assert.equal(r.status, 200);
      const { system, user } = lastPrompt();
      assert.match(system, /memory bank "Coach Ada" \(id "alice@example\.com"\)/);
      assert.match(system, /Keep Alice healthy and motivated/);
      assert.match(user, /Question: What is Alice training for\?/);
      assert.match(user, /The user is her physiotherapist\./);
      assert.match(
        user,
        /\[m\d\] \(recorded 2024-03-01; [^)]*\) Alice is training for the Berlin marathon in September\./,
      );
      assert.equal(r.body.mode, 'llm');
      assert.equal(r.body.response, 'Alice is preparing for the Berlin marathon [m1].');
      assert.equal(r.body.text, r.body.response);
      assert.equal(r.body.structured_output, undefined);
      assert.ok(r.body.usage.input_tokens > 0);
      assert.ok(r.body.usage.output_tokens > 0);
      assert.equal(r.body.usage.tokens_used, r.body.usage.input_tokens + r.body.usage.output_tokens);
      assert.ok(r.body.based_on.memories.some((m: { id: string }) => m.id === ids.marathon));
      await t.call('PATCH', bankPath(BANK), { body: { name: null, mission: '' } });
      const cleared = await t.call('GET', bankPath(BANK));
      assert.equal(cleared.body.name, null);
      assert.equal(cleared.body.mission, null);
      // Without an identity mission, the config's reflect_mission (Hindsight's key) stands in.
      await t.call('PATCH', bankPath(BANK, '/config'), {
        body: { updates: { reflect_mission: 'Answer as a running coach.' } },
      });
      await reflect({ query: 'What is Alice training for?' });
      assert.match(lastPrompt().system, /Mission and background of this bank:\nAnswer as a running coach\./);
    });

    test('tags and fact types restrict the evidence', async () => {
      fake.respond(() => ({ content: 'ok' }));
      await reflect({
        query: 'Alice running shoes marathon knee',
        tags: ['fitness'],
        tags_match: 'any_strict',
      });
      const { user } = lastPrompt();
      assert.match(user, /Berlin marathon/);
      assert.doesNotMatch(user, /Pegasus/);
      assert.doesNotMatch(user, /vegetarian/);
      await reflect({ query: 'Alice running shoes', fact_types: ['procedure'] });
      assert.match(lastPrompt().user, /No memories matched/);
    });

    test('response_schema uses structured output and the answer is validated', async () => {
      const schema = {
        type: 'object',
        properties: { goal: { type: 'string' }, injured: { type: 'boolean' } },
        required: ['goal', 'injured'],
        additionalProperties: false,
      };
      fake.respond(() => ({ content: '{"goal": "Berlin marathon", "injured": true}' }));
      const ok = await reflect({
        query: 'What is Alice training for, and is she injured?',
        response_schema: schema,
      });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.deepEqual(ok.body.structured_output, { goal: 'Berlin marathon', injured: true });
      assert.deepEqual(JSON.parse(ok.body.response), { goal: 'Berlin marathon', injured: true });
      const sent = fake.requests.at(-1)!.body;
      assert.equal(sent.response_format.type, 'json_schema');
      assert.deepEqual(sent.response_format.json_schema.schema, schema);
      assert.match(lastPrompt().system, /single JSON value/);

      // Invalid, then repaired after one request naming the problem.
      const before = fake.requests.length;
      fake.respond((_body, n) => ({
        content:
          n === before ? '{"goal": "Berlin marathon"}' : '{"goal": "Berlin marathon", "injured": false}',
      }));
      const repaired = await reflect({ query: 'What is Alice training for?', response_schema: schema });
      assert.equal(repaired.status, 200);
      assert.deepEqual(repaired.body.structured_output, { goal: 'Berlin marathon', injured: false });
      assert.equal(fake.requests.length, before + 2);
      assert.match(lastPrompt().user, /does not match the required schema: .*injured/);

      // Invalid twice: a clear 502 after exactly one repair attempt.
      const start = fake.requests.length;
      fake.respond(() => ({ content: '{"goal": 42, "injured": "no"}' }));
      const bad = await reflect({ query: 'What is Alice training for?', response_schema: schema });
      assert.equal(bad.status, 502);
      assert.equal(bad.body.error.code, 'llm_error');
      assert.match(bad.body.error.message, /did not match response_schema/);
      assert.equal(fake.requests.length, start + 2);
    });

    test('a response_schema that is not JSON Schema is a 400 before any model call', async () => {
      const start = fake.requests.length;
      const r = await reflect({ query: 'anything', response_schema: { type: 'no-such-type' } });
      assert.equal(r.status, 400);
      assert.equal(r.body.error.code, 'validation_error');
      assert.equal(r.body.error.details[0].path, 'response_schema');
      assert.equal(fake.requests.length, start);
    });

    test('a response_schema is compiled for its request only: an $id reused by another request (another tenant) is no conflict', async () => {
      // Before: ajv kept every compiled schema for the life of the process (memory growing with
      // each Reflect), and a second schema with the same $id was refused as "already exists".
      const id = 'https://example.com/answer.json';
      const first = { $id: id, type: 'object', properties: { a: { type: 'string' } }, required: ['a'] };
      const second = { $id: id, type: 'object', properties: { b: { type: 'number' } }, required: ['b'] };
      fake.respond(() => ({ content: '{"a": "x"}' }));
      for (let i = 0; i < 2; i++) {
        const r = await reflect({ query: 'What is Alice training for?', response_schema: first });
        assert.equal(r.status, 200, JSON.stringify(r.body));
      }
      fake.respond(() => ({ content: '{"b": 3}' }));
      const r = await reflect({ query: 'What is Alice training for?', response_schema: second });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body.structured_output, { b: 3 });
      // a schema claiming the meta-schema's own id is refused, and breaks nothing after it
      const meta = { $id: 'http://json-schema.org/draft-07/schema#', type: 'object' };
      assert.equal((await reflect({ query: 'q', response_schema: meta })).status, 400);
      const again = await reflect({ query: 'What is Alice training for?', response_schema: second });
      assert.equal(again.status, 200, JSON.stringify(again.body));
    });

    test('a model error is a clear 502 and nothing stored changes', async () => {
      const snapshot = async () => ({
        memories: (await t.call('GET', bankPath(BANK, '/memories'))).body,
        directives: (await t.call('GET', bankPath(BANK, '/directives'))).body,
        profile: (await t.call('GET', bankPath(BANK))).body,
        config: (await t.call('GET', bankPath(BANK, '/config'))).body,
        bank: await t.services.store.getBank('default', BANK),
      });
      const before = await snapshot();
      fake.respond(() => openAIError(500, 'the model is on fire'));
      const r = await reflect({ query: 'What is Alice training for?' });
      assert.equal(r.status, 502);
      assert.equal(r.body.error.code, 'llm_error');
      assert.match(r.body.error.message, /language model request failed/);
      assert.doesNotMatch(JSON.stringify(r.body), /at .*\.ts:\d+/, 'no stack trace');
      fake.respond(() => openAIError(400, 'bad request'));
      assert.equal(
        (await reflect({ query: 'What is Alice training for?', response_schema: { type: 'object' } })).status,
        502,
      );
      assert.deepEqual(await snapshot(), before);
    });
  });
}
