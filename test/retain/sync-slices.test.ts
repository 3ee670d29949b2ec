/**
 * A sync Retain writes in bounded slices (25 items / 200 entities / 100k characters), each in its
 * own transaction. What users rely on stays: the answer lists every memory, a document whose
 * items span slices is replaced whole (and is unchanged when sent again), and a request that
 * fails midway converges when retried: with the same Idempotency-Key to exactly what one run
 * stores, without one its documents still converge.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createOpenAIModel } from '../../src/llm/openai.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.js';
import { ENGINES } from '../helpers/engines.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';

const notes = (n: number, tag: string, doc?: (i: number) => string | undefined) =>
  Array.from({ length: n }, (_, i) => ({
    content: `${tag} note ${i} about the harbour`,
    document_id: doc?.(i),
  }));

for (const engine of ENGINES) {
  describe(`sync retain in slices (${engine})`, () => {
    // One database, served without a model and with one; `t` is the one a test talks to.
    let noModel: TestApp;
    let withModel: TestApp;
    let t: TestApp;
    let openai: FakeOpenAI;
    /** Item numbers whose extraction the fake model refuses (a failure midway). */
    const failing = new Set<number>();
    before(async () => {
      openai = await startFakeOpenAI();
      t = noModel = await testApp(engine);
      withModel = await noModel.reconfigured({
        llm: createOpenAIModel({ baseUrl: openai.url, model: 'fake-model', maxRetries: 0, timeoutMs: 2000 }),
      });
      openai.respond((body: any) => {
        const prompt = JSON.stringify(body.messages);
        const m = /(\w+) note (\d+) about/.exec(prompt);
        if (!m || failing.has(Number(m[2]))) return { content: 'I am sorry, I cannot do that.' };
        return {
          content: JSON.stringify({
            facts: [{ text: `fact of ${m[1]} ${m[2]}`, fact_type: 'world', entities: [] }],
          }),
        };
      });
    });
    after(async () => {
      await openai.close();
      await noModel.close();
    });

    const retain = (bank: string, body: unknown, headers?: Record<string, string>) =>
      t.call('POST', bankPath(bank, '/memories'), { body, headers });
    const texts = async (bank: string, doc?: string) => {
      const q = doc ? `&document_id=${doc}` : '';
      return (await t.call('GET', bankPath(bank, `/memories?limit=500${q}`))).body.items
        .map((m: any) => m.text)
        .sort();
    };
    const llmBank = async (bank: string) => {
      t = withModel;
      assert.equal((await retain(bank, { items: [{ content: 'seed' }] })).status, 200);
      const r = await t.call('PATCH', bankPath(bank, '/config'), {
        body: { updates: { retain_extraction_mode: 'concise' } },
      });
      assert.equal(r.status, 200);
    };

    test('the answer lists every memory; a document spanning slices is replaced whole and then unchanged', async () => {
      t = noModel;
      const bank = 'spans';
      const v1 = await retain(bank, { document_id: 'log', items: notes(70, 'v1') });
      assert.equal(v1.status, 200, JSON.stringify(v1.body));
      assert.equal(v1.body.memories_created, 70);
      assert.equal(new Set(v1.body.memory_ids).size, 70);
      assert.equal(v1.body.document_id, 'log');
      // Three slices of 25, 25, 20: version 2 replaces every memory of version 1.
      const v2 = await retain(bank, { document_id: 'log', items: notes(60, 'v2') });
      assert.equal(v2.body.memories_created, 60);
      const stored = await texts(bank, 'log');
      assert.equal(stored.length, 60);
      assert.ok(
        stored.every((x: string) => x.startsWith('v2 ')),
        'no memory of version 1 is left',
      );
      const doc = await t.call('GET', bankPath(bank, '/documents/log'));
      assert.equal(doc.body.memory_count, 60);
      // The last slice recorded the whole document's hash: sent again, nothing is done.
      const again = await retain(bank, { document_id: 'log', items: notes(60, 'v2') });
      assert.equal(again.body.memories_created, 0);
      assert.equal((await texts(bank, 'log')).length, 60);
    });

    test('failed midway, a retry with the same Idempotency-Key stores what one run would', async () => {
      const bank = 'retry-key';
      await llmBank(bank);
      const before = await texts(bank);
      // Items 0-29 have no document, 30-59 are document 'd': slices 0-24, 25-49, 50-59.
      const body = { items: notes(60, 'k', (i) => (i >= 30 ? 'd' : undefined)) };
      const headers = { 'idempotency-key': 'retain-60' };
      failing.add(40);
      const bad = await retain(bank, body, headers);
      assert.equal(bad.status, 502, JSON.stringify(bad.body));
      // The first slice stayed (25 memories); the second did not.
      assert.equal((await texts(bank)).length, before.length + 25);
      failing.clear();
      const ok = await retain(bank, body, headers);
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.memories_created, 60);
      assert.equal(new Set(ok.body.memory_ids).size, 60);
      const after = await texts(bank);
      assert.equal(after.length, before.length + 60, 'the first slice is not stored twice');
      assert.equal(new Set(after).size, after.length);
      assert.equal((await texts(bank, 'd')).length, 30);
      const listed = (await t.call('GET', bankPath(bank, '/memories?limit=500'))).body.items.map(
        (m: any) => m.id,
      );
      for (const id of ok.body.memory_ids) assert.ok(listed.includes(id), `answered id ${id} is stored`);
      // Replayed as the request it is now.
      const replay = await retain(bank, body, headers);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(replay.body.memory_ids, ok.body.memory_ids);
    });

    test('failed midway, a retry without a key still converges on whole documents', async () => {
      const bank = 'retry-doc';
      await llmBank(bank);
      // Document 'a' ends in the first slice; 'b' spans the second and third.
      const body = { items: notes(60, 'd', (i) => (i < 20 ? 'a' : 'b')) };
      failing.add(55);
      assert.equal((await retain(bank, body)).status, 502);
      // 'a' is complete; 'b' is half-written (its hash is not recorded).
      assert.equal((await texts(bank, 'a')).length, 20);
      assert.equal((await texts(bank, 'b')).length, 30);
      failing.clear();
      const ok = await retain(bank, body);
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      // 'a' arrives unchanged; 'b' is replaced whole.
      assert.equal(ok.body.memories_created, 40);
      assert.equal((await texts(bank, 'a')).length, 20);
      const b = await texts(bank, 'b');
      assert.equal(b.length, 40);
      assert.equal(new Set(b).size, 40);
      assert.equal((await retain(bank, body)).body.memories_created, 0, 'both documents are complete now');
    });
  });
}
