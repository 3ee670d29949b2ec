import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAnthropicModel } from '../../src/llm/anthropic.js';
import { createOpenAIModel } from '../../src/llm/openai.js';
import { type FakeAnthropic, startFakeAnthropic } from '../fakes/anthropic-server.js';
import { type FakeOpenAI, openAIError, startFakeOpenAI } from '../fakes/openai-server.js';
import { ENGINES } from '../helpers/engines.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';

const FACTS = {
  facts: [
    {
      text: 'Caroline went to an LGBTQ support group on 7 May 2023',
      fact_type: 'experience',
      entities: [{ text: 'Caroline', type: 'PERSON' }],
      occurred_start: '2023-05-07T00:00:00Z',
      occurred_end: '2023-05-08T00:00:00Z',
    },
    {
      text: 'Caroline prefers painting at sunrise',
      fact_type: 'preference',
      entities: [{ text: 'Caroline', type: 'PERSON' }],
    },
  ],
};

for (const engine of ENGINES) {
  describe(`retain intake (${engine})`, () => {
    // One database, served as configured without a model, with OpenAI's, with Anthropic's; `t`
    // is the one a test talks to.
    let noModel: TestApp;
    let withOpenAI: TestApp;
    let withClaude: TestApp;
    let t: TestApp;
    let openai: FakeOpenAI;
    let anthropic: FakeAnthropic;
    before(async () => {
      openai = await startFakeOpenAI();
      anthropic = await startFakeAnthropic();
      t = noModel = await testApp(engine);
      withOpenAI = await noModel.reconfigured({
        llm: createOpenAIModel({ baseUrl: openai.url, model: 'fake-model', maxRetries: 2, timeoutMs: 800 }),
      });
      withClaude = await noModel.reconfigured({
        llm: createAnthropicModel({
          baseUrl: anthropic.url,
          model: 'claude-fake',
          apiKey: 'k',
          maxRetries: 1,
        }),
      });
    });
    after(async () => {
      await openai.close();
      await anthropic.close();
      await noModel.close();
    });

    const retain = (bank: string, body: unknown) => t.call('POST', bankPath(bank, '/memories'), { body });
    const texts = async (bank: string) =>
      (await t.call('GET', bankPath(bank, '/memories?limit=500'))).body.items.map((m: any) => m.text).sort();
    const setMode = (bank: string, updates: Record<string, unknown>) =>
      t.call('PATCH', bankPath(bank, '/config'), { body: { updates } });
    const useOpenAI = () => {
      t = withOpenAI;
    };

    test('concise mode with an OpenAI-compatible model stores the extracted facts', async () => {
      useOpenAI();
      openai.respond(() => ({ content: JSON.stringify(FACTS) }));
      const before = openai.requests.length;
      await retain('llm', { items: [{ content: 'seed' }] });
      await setMode('llm', { retain_extraction_mode: 'concise' });
      const r = await retain('llm', {
        items: [
          {
            content: 'Caroline: I went to a LGBTQ support group yesterday. I love painting at sunrise!',
            timestamp: '2023-05-08T13:56:00Z',
          },
        ],
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.extraction, 'llm');
      assert.equal(r.body.memories_created, 2);
      const list = (await t.call('GET', bankPath('llm', '/memories'))).body.items;
      const exp = list.find((m: any) => m.type === 'experience');
      assert.equal(exp.occurred_start, '2023-05-07T00:00:00.000Z');
      assert.deepEqual(exp.entities, ['Caroline']);
      assert.equal(exp.mentioned_at, '2023-05-08T13:56:00.000Z');
      const req = openai.requests.slice(before).find((x) => x.path.endsWith('/chat/completions'))!;
      const prompt = JSON.stringify(req.body.messages);
      assert.match(prompt, /few facts/i);
      assert.match(prompt, /support group yesterday/);
      assert.match(prompt, /2023-05-08T13:56:00/);
      const profile = (await t.call('GET', bankPath('llm'))).body;
      assert.ok(profile.llm_usage.input_tokens > 0, 'usage recorded per bank');
      assert.ok(profile.llm_usage.output_tokens > 0);
    });

    test('custom mode sends the bank instructions; verbose asks for every fact', async () => {
      useOpenAI();
      openai.respond(() => ({
        content: JSON.stringify({ facts: [{ text: 'x fact', fact_type: 'world', entities: [] }] }),
      }));
      await retain('custom', { items: [{ content: 'seed' }] });
      await setMode('custom', {
        retain_extraction_mode: 'custom',
        retain_custom_instructions: 'Only keep facts about pets.',
      });
      const n = openai.requests.length;
      await retain('custom', { items: [{ content: 'My dog is called Rex.' }] });
      assert.match(JSON.stringify(openai.requests[n]!.body), /Only keep facts about pets/);
      await setMode('custom', { retain_extraction_mode: 'verbose' });
      const m = openai.requests.length;
      await retain('custom', { items: [{ content: 'My cat is called Tom.' }] });
      const body = JSON.stringify(openai.requests[m]!.body);
      assert.match(body, /every distinct fact/);
      assert.doesNotMatch(body, /Only keep facts about pets/);
    });

    test('broken JSON is repaired; hopeless JSON and timeouts fail clearly with nothing stored', async () => {
      useOpenAI();
      await retain('broken', { items: [{ content: 'seed' }] });
      await setMode('broken', { retain_extraction_mode: 'concise' });
      openai.respond(() => ({
        content:
          "```json\n{facts: [{'text': 'Repaired fact about tea', 'fact_type': 'world', 'entities': [],},]}\n```",
      }));
      const ok = await retain('broken', { items: [{ content: 'tea talk' }] });
      assert.equal(ok.status, 200);
      assert.ok((await texts('broken')).includes('Repaired fact about tea'));
      const before = await texts('broken');
      openai.respond(() => ({ content: 'I am sorry, I cannot do that.' }));
      const bad = await retain('broken', { items: [{ content: 'hopeless' }] });
      assert.equal(bad.status, 502);
      assert.equal(bad.body.error.code, 'llm_error');
      // An app over the same store whose model gives up sooner, so the timeout costs 150 ms, not 800.
      const hasty = await noModel.reconfigured({
        llm: createOpenAIModel({ baseUrl: openai.url, model: 'fake-model', maxRetries: 2, timeoutMs: 150 }),
      });
      openai.respond(() => ({ delayMs: 3000, content: JSON.stringify(FACTS) }));
      const slow = await hasty.call('POST', bankPath('broken', '/memories'), {
        body: { items: [{ content: 'slow' }] },
      });
      assert.equal(slow.status, 502);
      assert.match(slow.body.error.message, /within 150 ms/);
      assert.deepEqual(await texts('broken'), before, 'nothing half-stored');
    });

    test('429 then 200: the retry succeeds', async () => {
      useOpenAI();
      await retain('ratelimited', { items: [{ content: 'seed' }] });
      await setMode('ratelimited', { retain_extraction_mode: 'concise' });
      let calls = 0;
      openai.respond(() => {
        calls++;
        return calls === 1
          ? { ...openAIError(429, 'slow down'), headers: { 'retry-after': '0' } }
          : { content: JSON.stringify(FACTS) };
      });
      const r = await retain('ratelimited', { items: [{ content: 'anything' }] });
      assert.equal(r.status, 200);
      assert.equal(r.body.memories_created, 2);
      assert.equal(calls, 2);
    });

    test('an Anthropic model extracts through a forced tool', async () => {
      t = withClaude;
      anthropic.respond(() => ({ toolInput: FACTS }));
      await retain('claude', { items: [{ content: 'seed' }] });
      await setMode('claude', { retain_extraction_mode: 'verbose' });
      const r = await retain('claude', { items: [{ content: 'Caroline went to a support group.' }] });
      assert.equal(r.status, 200);
      assert.equal(r.body.extraction, 'llm');
      assert.ok((await texts('claude')).includes('Caroline prefers painting at sunrise'));
      assert.equal(anthropic.requests.at(-1)!.body.tool_choice.type, 'tool');
    });

    test('without a model the model modes fall back to the local extractor', async () => {
      t = noModel;
      await retain('local', { items: [{ content: 'seed' }] });
      await setMode('local', { retain_extraction_mode: 'concise' });
      const r = await retain('local', {
        items: [
          {
            content:
              'Melanie: Hi! I painted a lake sunrise last weekend. We also went camping with the kids in the mountains.',
          },
        ],
      });
      assert.equal(r.body.extraction, 'local');
      const all = await texts('local');
      assert.ok(all.includes('Melanie: I painted a lake sunrise last weekend.'), all.join(' | '));
      assert.ok(all.includes('Melanie: We also went camping with the kids in the mountains.'));
      assert.ok(!all.some((x: string) => x.endsWith('Hi!')), 'concise drops small talk');
      const ents = (await t.call('GET', bankPath('local', '/entities'))).body.items.map((e: any) => e.name);
      assert.ok(ents.includes('Melanie'));
    });

    test('relative dates are anchored at the item timestamp', async () => {
      t = noModel;
      await retain('dates', {
        items: [
          { content: 'Yesterday I ran a marathon', timestamp: '2024-03-15T12:00:00Z' },
          { content: 'Last June we moved to Lisbon', timestamp: '2024-03-15T12:00:00Z' },
        ],
      });
      const items = (await t.call('GET', bankPath('dates', '/memories'))).body.items;
      const run = items.find((m: any) => m.text.includes('marathon'));
      assert.equal(run.occurred_start, '2024-03-14T00:00:00.000Z');
      assert.equal(run.occurred_end, '2024-03-15T00:00:00.000Z');
      const move = items.find((m: any) => m.text.includes('Lisbon'));
      assert.equal(move.occurred_start, '2023-06-01T00:00:00.000Z');
    });

    test('entity resolution merges the same person and keeps different ones apart', async () => {
      const P = (text: string) => ({ text, type: 'PERSON' });
      await retain('people', {
        items: [{ content: 'Bob Smith joined the team', entities: [P('Bob Smith')] }],
      });
      await retain('people', { items: [{ content: 'bob smith likes golf', entities: [P('bob smith')] }] });
      await retain('people', { items: [{ content: 'Bob fixed the printer', entities: [P('Bob')] }] });
      await retain('people', { items: [{ content: 'Anna arrived', entities: [P('Anna')] }] });
      await retain('people', { items: [{ content: 'Ann left', entities: [P('Ann')] }] });
      let ents = (await t.call('GET', bankPath('people', '/entities'))).body.items;
      const bob = ents.find((e: any) => e.name === 'Bob Smith');
      assert.equal(bob.mention_count, 3);
      assert.deepEqual(bob.aliases, ['Bob']);
      assert.ok(
        ents.some((e: any) => e.name === 'Anna') && ents.some((e: any) => e.name === 'Ann'),
        'Ann is not Anna',
      );
      // a second Bob makes "Bob" ambiguous: it no longer merges
      await retain('people', { items: [{ content: 'Bob Jones is new', entities: [P('Bob Jones')] }] });
      await retain('people', { items: [{ content: 'Bob said hi', entities: [P('Bob')] }] });
      ents = (await t.call('GET', bankPath('people', '/entities'))).body.items;
      assert.equal(ents.find((e: any) => e.name === 'Bob Smith').mention_count, 3);
      assert.equal(ents.find((e: any) => e.name === 'Bob Jones').mention_count, 1);
      assert.ok(ents.some((e: any) => e.name === 'Bob'));
      // resolve_entities: false keeps the name as given
      await retain('people2', { items: [{ content: 'x', entities: [P('Carl Sagan')] }] });
      await retain('people2', { items: [{ content: 'y', entities: [P('Carl')], resolve_entities: false }] });
      const e2 = (await t.call('GET', bankPath('people2', '/entities'))).body.items
        .map((e: any) => e.name)
        .sort();
      assert.deepEqual(e2, ['Carl', 'Carl Sagan']);
    });

    test('re-retaining an unchanged document does no work', async () => {
      const body = { document_id: 'notes', items: [{ content: 'stable one' }, { content: 'stable two' }] };
      const a = await retain('unchanged', body);
      assert.equal(a.body.memories_created, 2);
      const ids = (await t.call('GET', bankPath('unchanged', '/memories'))).body.items
        .map((m: any) => m.id)
        .sort();
      const b = await retain('unchanged', body);
      assert.equal(b.body.memories_created, 0);
      const again = (await t.call('GET', bankPath('unchanged', '/memories'))).body.items
        .map((m: any) => m.id)
        .sort();
      assert.deepEqual(again, ids);
      const c = await retain('unchanged', { document_id: 'notes', items: [{ content: 'changed' }] });
      assert.equal(c.body.memories_created, 1);
      assert.deepEqual(await texts('unchanged'), ['changed']);
    });

    test('long content is chunked on boundaries in chunks mode', async () => {
      const turns = Array.from(
        { length: 300 },
        (_, i) => `Speaker${i % 2}: this is sentence number ${i} of a long transcript about gardening.`,
      ).join('\n');
      const r = await retain('long-doc', { document_id: 'transcript', items: [{ content: turns }] });
      assert.equal(r.status, 200);
      assert.ok(r.body.memories_created > 1);
      const items = (await t.call('GET', bankPath('long-doc', '/memories?limit=500'))).body.items;
      assert.ok(items.every((m: any) => m.chunk_id && m.document_id === 'transcript'));
      assert.ok(
        items.every((m: any) => /^Speaker\d: /.test(m.text)),
        'chunks start at a turn',
      );
      assert.equal(
        items.map((m: any) => m.text).join('\n').length,
        turns.length - (items.length - 1) * 0,
        'verbatim',
      );
    });
  });
}
