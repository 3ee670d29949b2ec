/**
 * Every documented input limit (docs/security.md): just inside is accepted, just outside is a
 * clear 4xx naming the field, and a rejected request stores nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_BODY_BYTES } from '../../src/api/app.js';
import { ELEMENTS_REFUSED, MAX_JSON_MEMBERS, MEMBERS_REFUSED } from '../../src/api/body-text.js';
import { MAX_METADATA_BYTES, MAX_METADATA_DEPTH } from '../../src/contract/common.js';
import { MAX_RESPONSE_SCHEMA_BYTES, MAX_RESPONSE_SCHEMA_DEPTH } from '../../src/contract/reflect.js';
import { FACT_TYPES } from '../../src/contract/vocabulary.js';
import { MAX_CONTENT_CHARS, MAX_ITEMS } from '../../src/contract/memories.js';
import { MAX_ID_LENGTH } from '../../src/core/ids.js';
import { ENGINES } from '../helpers/engines.js';
import { bankPath, type TestApp, type TestResponse, testApp } from '../helpers/app.js';

function assert400(r: TestResponse, path: string, code = 'validation_error') {
  assert.equal(r.status, 400, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.error.code, code);
  if (code === 'validation_error') {
    assert.ok(
      r.body.error.details.some((d: any) => d.path === path),
      `${path} not in ${JSON.stringify(r.body.error.details)}`,
    );
  }
}

/** `{"a": {"a": ... 1}}` nested `depth` objects deep. */
const nested = (depth: number): unknown => (depth === 0 ? 1 : { a: nested(depth - 1) });

for (const engine of ENGINES) {
  describe(`input limits (${engine})`, () => {
    let t: TestApp;
    const bank = 'limits';
    before(async () => {
      t = await testApp(engine);
      assert.equal(
        (
          await t.call('POST', bankPath(bank, '/memories'), {
            body: { items: [{ content: 'the only memory' }] },
          })
        ).status,
        200,
      );
    });
    after(async () => {
      // nothing from any rejected request was stored
      const list = await t.call('GET', bankPath(bank, '/memories'));
      const texts = list.body.items.map((m: any) => m.text).sort();
      assert.deepEqual(texts, ['accepted at the limits', 'the only memory']);
      await t.close();
    });

    const retain = (body: unknown, b = bank) => t.call('POST', bankPath(b, '/memories'), { body });

    test(`body size: more than ${MAX_BODY_BYTES} bytes is 413`, async () => {
      const head = '{"items":[{"content":"';
      const tail = '"}]}';
      const over = head + 'x'.repeat(MAX_BODY_BYTES + 1 - head.length - tail.length) + tail;
      assert.equal(Buffer.byteLength(over), MAX_BODY_BYTES + 1);
      const r = await t.call('POST', bankPath(bank, '/memories'), {
        rawBody: over,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(r.status, 413);
      assert.equal(r.body.error.code, 'payload_too_large');
      // exactly at the limit the body is read (and then fails on the content length: a 400, not a 413)
      const at = head + 'x'.repeat(MAX_BODY_BYTES - head.length - tail.length) + tail;
      const r2 = await t.call('POST', bankPath(bank, '/memories'), {
        rawBody: at,
        headers: { 'content-type': 'application/json' },
      });
      assert400(r2, 'items.0.content');
    });

    test(`item count: at most ${MAX_ITEMS} items per Retain`, async () => {
      const items = (n: number) => Array.from({ length: n }, () => ({ content: 'x' }));
      assert400(await retain({ items: items(MAX_ITEMS + 1) }), 'items');
      // at the limit the schema accepts it (the bad fact_type of the last item proves the rest passed)
      const atLimit = items(MAX_ITEMS) as any[];
      atLimit[MAX_ITEMS - 1].fact_type = 'nope';
      assert400(await retain({ items: atLimit }), `items.${MAX_ITEMS - 1}.fact_type`);
      assert400(await retain({ items: [] }), 'items');
    });

    test(`content: at most ${MAX_CONTENT_CHARS} characters; context at most 10,000`, async () => {
      assert400(await retain({ items: [{ content: 'y'.repeat(MAX_CONTENT_CHARS + 1) }] }), 'items.0.content');
      assert400(await retain({ items: [{ content: '' }] }), 'items.0.content');
      assert400(await retain({ items: [{ content: 'ok', context: 'c'.repeat(10_001) }] }), 'items.0.context');
    });

    test(`metadata: at most ${MAX_METADATA_BYTES} bytes as JSON and ${MAX_METADATA_DEPTH} levels deep`, async () => {
      const big = { blob: 'm'.repeat(MAX_METADATA_BYTES) };
      assert400(await retain({ items: [{ content: 'ok', metadata: big }] }), 'items.0.metadata');
      assert400(
        await retain({ items: [{ content: 'ok', metadata: nested(MAX_METADATA_DEPTH + 1) }] }),
        'items.0.metadata',
      );
      // absurdly deep nesting is a 400 too, never a crash
      const deep = `{"items":[{"content":"ok","metadata":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}]}`;
      const r = await t.call('POST', bankPath(bank, '/memories'), {
        rawBody: deep,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(r.status, 400);
      assert.equal(r.body.error.code, 'validation_error');
      const arrays = `{"items":[{"content":"ok","metadata":{"a":${'['.repeat(20)}${']'.repeat(20)}}}]}`;
      assert400(
        await t.call('POST', bankPath(bank, '/memories'), {
          rawBody: arrays,
          headers: { 'content-type': 'application/json' },
        }),
        'items.0.metadata',
      );
      assert400(await retain({ items: [{ content: 'ok', metadata: 'not an object' }] }), 'items.0.metadata');
    });

    test(`metadata wider than any 64 KB object (${MAX_JSON_MEMBERS} members) is refused before it is walked`, async () => {
      // zod walked every member of a 500,000-member metadata (1.7 s in one step) before its size was checked.
      const wide = Object.fromEntries(Array.from({ length: MAX_JSON_MEMBERS + 1 }, (_, i) => [`k${i}`, 0]));
      const r = await retain({ items: [{ content: 'ok', metadata: wide }] });
      assert.equal(r.status, 400);
      assert.equal(r.body.error.message, MEMBERS_REFUSED);
      // Just inside the width, the size limit answers as ever.
      const at = Object.fromEntries(Array.from({ length: MAX_JSON_MEMBERS }, (_, i) => [`k${i}`, 0]));
      assert400(await retain({ items: [{ content: 'ok', metadata: at }] }), 'items.0.metadata');
    });

    test('tags: at most 64, each 1-128 characters', async () => {
      const tags = (n: number, len = 5) => Array.from({ length: n }, (_, i) => `${i}`.padEnd(len, 't'));
      assert400(await retain({ items: [{ content: 'ok', tags: tags(65) }] }), 'items.0.tags');
      assert400(await retain({ items: [{ content: 'ok', tags: ['t'.repeat(129)] }] }), 'items.0.tags.0');
      assert400(await retain({ items: [{ content: 'ok', tags: [''] }] }), 'items.0.tags.0');
    });

    test('entities: at most 100 per item, names up to 256 characters', async () => {
      const ents = Array.from({ length: 101 }, (_, i) => ({ text: `E${i}`, type: 'PERSON' }));
      assert400(await retain({ items: [{ content: 'ok', entities: ents }] }), 'items.0.entities');
      assert400(
        await retain({ items: [{ content: 'ok', entities: [{ text: 'n'.repeat(257) }] }] }),
        'items.0.entities.0.text',
      );
    });

    test(`ids: bank and document ids 1-${MAX_ID_LENGTH} characters, no control characters or edge white space`, async () => {
      for (const id of ['b'.repeat(MAX_ID_LENGTH + 1), 'tab\there', 'line\nbreak', ' padded', 'del\u007f']) {
        assert400(await retain({ items: [{ content: 'x' }] }, id), 'bank');
      }
      for (const doc of ['d'.repeat(MAX_ID_LENGTH + 1), 'bell\u0007', ' lead']) {
        const r = await retain({ items: [{ content: 'x' }], document_id: doc });
        assert.equal(r.status, 400, JSON.stringify(doc));
        assert.ok(r.body.error.details.some((d: any) => d.path === 'document_id'));
      }
      // space and project ids are slugs
      assert400(await t.call('POST', '/v1/default/spaces', { body: { id: 'has space', name: 'x' } }), 'id');
      assert400(await t.call('POST', '/v1/default/spaces', { body: { id: 'ünïcode', name: 'x' } }), 'id');
      assert400(await t.call('POST', '/v1/default/projects', { body: { id: 'a/b', name: 'x' } }), 'id');
      assert400(
        await t.call('POST', '/v1/default/projects', { body: { id: 'p'.repeat(65), name: 'x' } }),
        'id',
      );
    });

    test('recall: query at most 500 tokens (and 20,000 characters); list pages at most 500', async () => {
      const words = Array.from({ length: 600 }, (_, i) => `word${i}`).join(' ');
      assert400(
        await t.call('POST', bankPath(bank, '/memories/recall'), { body: { query: words } }),
        'query',
        'query_too_long',
      );
      assert400(
        await t.call('POST', bankPath(bank, '/memories/recall'), { body: { query: 'q'.repeat(20_001) } }),
        'query',
      );
      assert400(await t.call('GET', bankPath(bank, '/memories?limit=501')), 'limit');
    });

    test('the dearest Recall and Reflect are bounded: at most one of each fact type, a response_schema of 8 KB', async () => {
      // Before: a Recall listing "world" a million times (a 9 MB body) held the embedded
      // engine for 13 s; a 2.3 MB response_schema took ajv 16 s to compile, on the event loop.
      const types = (n: number) => Array.from({ length: n }, (_, i) => FACT_TYPES[i % FACT_TYPES.length]);
      const recall = (body: unknown) => t.call('POST', bankPath(bank, '/memories/recall'), { body });
      assert400(await recall({ query: 'q', types: types(FACT_TYPES.length + 1) }), 'types');
      assert400(await recall({ query: 'q', types: types(50_000) }), 'types');
      // Wider than any request's list: refused by the body's shape, before any schema walks it.
      const wide = await recall({ query: 'q', types: types(200_000) });
      assert.equal(wide.status, 400);
      assert.equal(wide.body.error.message, ELEMENTS_REFUSED);
      assert.equal((await recall({ query: 'q', types: types(FACT_TYPES.length) })).status, 200);
      const reflect = (body: unknown) => t.call('POST', bankPath(bank, '/reflect'), { body });
      assert400(await reflect({ query: 'q', fact_types: types(FACT_TYPES.length + 1) }), 'fact_types');
      const props = (n: number) =>
        Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { type: 'string' }]));
      const schema = (n: number) => ({ type: 'object', properties: props(n) });
      let n = 1;
      while (JSON.stringify(schema(n + 1)).length <= MAX_RESPONSE_SCHEMA_BYTES) n++;
      assert400(await reflect({ query: 'q', response_schema: schema(n + 1) }), 'response_schema');
      assert400(
        await reflect({ query: 'q', response_schema: nested(MAX_RESPONSE_SCHEMA_DEPTH + 1) }),
        'response_schema',
      );
      // within the bounds the schema passes validation (and then needs a model: 422, not 400)
      const ok = await reflect({ query: 'q', response_schema: schema(n) });
      assert.equal(ok.status, 422, JSON.stringify(ok.body).slice(0, 300));
      assert.equal(ok.body.error.code, 'llm_required');
    });

    test('values exactly at every limit are accepted', async () => {
      const r = await retain({
        items: [
          {
            content: 'accepted at the limits',
            context: 'c'.repeat(10_000),
            tags: Array.from({ length: 64 }, (_, i) => `${i}`.padEnd(128, 't')),
            metadata: { ...(nested(MAX_METADATA_DEPTH) as object), pad: 'p'.repeat(60_000) },
            entities: Array.from({ length: 100 }, (_, i) => ({
              text: `${'n'.repeat(250)}${i}`,
              type: 'PERSON',
            })),
          },
        ],
        document_id: 'd'.repeat(MAX_ID_LENGTH),
      });
      assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
      const long = await retain(
        { items: [{ content: 'z'.repeat(MAX_CONTENT_CHARS) }] },
        'b'.repeat(MAX_ID_LENGTH),
      );
      assert.equal(long.status, 200);
    });
  });
}
