import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ENGINES } from '../helpers/engines.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';

function assertErrorBody(body: any, code: string) {
  assert.equal(body.error.code, code, JSON.stringify(body));
  assert.equal(typeof body.error.message, 'string');
  assert.equal(typeof body.error.request_id, 'string');
  assert.ok(!/\bat \S+ \(|node_modules|\.ts:\d+/.test(JSON.stringify(body)), 'no stack traces');
}

for (const engine of ENGINES) {
  describe(`bad input and hygiene (${engine})`, () => {
    let t: TestApp;
    const bank = 'victim';
    let snapshot: string;
    before(async () => {
      t = await testApp(engine);
      await t.call('POST', bankPath(bank, '/memories'), {
        body: {
          items: [{ content: 'precious memory one' }, { content: 'precious memory two', tags: ['keep'] }],
        },
      });
      snapshot = JSON.stringify((await t.call('GET', bankPath(bank, '/memories'))).body);
    });
    after(async () => {
      // nothing stored before was lost, nothing half-written stayed
      assert.equal(JSON.stringify((await t.call('GET', bankPath(bank, '/memories'))).body), snapshot);
      await t.close();
    });

    const retain = (body: unknown, headers?: Record<string, string>) =>
      t.call('POST', bankPath(bank, '/memories'), { body, headers });

    test('malformed JSON is 400 validation_error', async () => {
      const r = await t.call('POST', bankPath(bank, '/memories'), {
        rawBody: '{"items": [',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(r.status, 400);
      assertErrorBody(r.body, 'validation_error');
    });

    test('wrong content type is 415', async () => {
      const r = await t.call('POST', bankPath(bank, '/memories'), {
        rawBody: 'items=1',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(r.status, 415);
      assertErrorBody(r.body, 'unsupported_media_type');
    });

    test('wrong types, empty items, 1,001 items, unknown fact_type name the field', async () => {
      const cases: [unknown, string][] = [
        [{ items: 'nope' }, 'items'],
        [{ items: [] }, 'items'],
        [{ items: [{ content: 42 }] }, 'items.0.content'],
        [{ items: [{ content: '' }] }, 'items.0.content'],
        [{ items: [{ content: 'ok', fact_type: 'gossip' }] }, 'items.0.fact_type'],
        [{ items: [{ content: 'ok', timestamp: 'last tuesday-ish' }] }, 'items.0.timestamp'],
        [{ items: [{ content: 'ok', tags: 'a' }] }, 'items.0.tags'],
        [{ items: Array.from({ length: 1001 }, () => ({ content: 'x' })) }, 'items'],
        [{}, 'items'],
      ];
      for (const [body, path] of cases) {
        const r = await retain(body);
        assert.equal(r.status, 400, JSON.stringify(body).slice(0, 80));
        assertErrorBody(r.body, 'validation_error');
        assert.ok(
          r.body.error.details.some((d: any) => d.path === path),
          `${path}: ${JSON.stringify(r.body.error.details)}`,
        );
      }
    });

    test('a 20 MB body is 413 payload_too_large', async () => {
      const big = JSON.stringify({ items: [{ content: 'x'.repeat(20 * 1024 * 1024) }] });
      const r = await t.call('POST', bankPath(bank, '/memories'), {
        rawBody: big,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(r.status, 413);
      assertErrorBody(r.body, 'payload_too_large');
    });

    test('bank id of 300 characters and control characters are 400', async () => {
      for (const id of ['b'.repeat(300), 'tab\there', 'nul\u0000x']) {
        const r = await t.call('POST', bankPath(id, '/memories'), { body: { items: [{ content: 'x' }] } });
        assert.equal(r.status, 400, JSON.stringify(id));
        assertErrorBody(r.body, 'validation_error');
      }
    });

    test('control characters and emoji in content are stored faithfully', async () => {
      const content = 'emoji 🧠🎉, zero-width \u200b, bell \u0007, CJK 記憶, RTL שלום';
      const r = await t.call('POST', bankPath('unicode', '/memories'), { body: { items: [{ content }] } });
      assert.equal(r.status, 200);
      const list = await t.call('GET', bankPath('unicode', '/memories'));
      assert.equal(list.body.items[0].text, content);
      const rec = await t.call('POST', bankPath('unicode', '/memories/recall'), {
        body: { query: '記憶 🧠 emoji' },
      });
      assert.equal(rec.body.results[0].text, content);
    });

    test('disposition 0 and 6 are 400', async () => {
      for (const v of [0, 6, 2.5, '3']) {
        const r = await t.call('PATCH', bankPath(bank, '/config'), {
          body: { updates: { disposition_empathy: v } },
        });
        assert.equal(r.status, 400, String(v));
        assertErrorBody(r.body, 'validation_error');
      }
    });

    test('unknown fields are ignored and named in X-Ignored-Fields', async () => {
      const r = await t.call('POST', bankPath('tolerant', '/memories'), {
        body: { items: [{ content: 'hello', mood: 'happy' }], future_flag: true },
      });
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('x-ignored-fields'), 'items.0.mood, future_flag');
      const clean = await t.call('POST', bankPath('tolerant', '/memories/recall'), {
        body: { query: 'hello' },
      });
      assert.equal(clean.headers.get('x-ignored-fields'), null);
    });

    test('X-Ignored-Fields percent-encodes names a header cannot carry (found by fuzzing: a 500)', async () => {
      const r = await t.call('POST', bankPath('tolerant', '/memories'), {
        body: {
          items: [{ content: 'hello' }],
          '\r\n': 1,
          '\ufeff': 2,
          'a,b': 3,
          'naïve 100%': 4,
        },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.headers.get('x-ignored-fields'), '%0D%0A, %EF%BB%BF, a%2Cb, na%C3%AFve%20100%25');
      const many = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`unknown_field_${i}`, i]));
      const long = await t.call('POST', bankPath('tolerant', '/memories/recall'), {
        body: { query: 'hello', ...many },
      });
      assert.equal(long.status, 200);
      const names = long.headers.get('x-ignored-fields')!.split(', ');
      assert.ok(names.length > 50 && names.length < 400, `${names.length} whole names`);
      assert.equal(names.at(-1), `unknown_field_${names.length - 1}`, 'the last name is whole');
    });

    test('unknown routes and methods are 404 with the error body', async () => {
      for (const [m, p] of [
        ['GET', '/v1/default/nothing'],
        ['GET', '/nope'],
        ['PUT', bankPath(bank, '/memories')],
      ] as const) {
        const r = await t.call(m, p);
        assert.equal(r.status, 404, `${m} ${p}`);
        assertErrorBody(r.body, 'not_found');
      }
    });

    test('every response carries X-Request-Id; a sane incoming one is echoed', async () => {
      const r = await t.call('GET', '/health', { headers: { 'x-request-id': 'abc-123' } });
      assert.equal(r.headers.get('x-request-id'), 'abc-123');
      const e = await t.call('GET', '/v1/default/nothing');
      assert.equal(e.headers.get('x-request-id'), e.body.error.request_id);
      // Found by fuzzing: the router ran the request-id middleware twice for this path.
      for (const path of ['/*', '/%2A']) {
        const star = await t.call('PUT', path);
        assert.equal(star.status, 404);
        assert.equal(star.headers.get('x-request-id'), star.body.error.request_id, path);
      }
    });

    test('a refused request whose query holds a NUL is still audited (found by fuzzing)', async () => {
      const r = await t.call('DELETE', `${bankPath('no-such-bank')}?space=a%00b`);
      assert.equal(r.status, 404);
      const audit = await t.call('GET', '/v1/default/audit?bank=no-such-bank');
      assert.equal(audit.status, 200);
      const entry = audit.body.items.find(
        (a: { request_id: string }) => a.request_id === r.body.error.request_id,
      );
      assert.equal(entry?.space_id, 'a\uFFFDb', JSON.stringify(audit.body.items));
    });

    test('health, readiness, version, OpenAPI and docs need no key', async () => {
      assert.deepEqual((await t.call('GET', '/health', { token: null })).body, { status: 'ok' });
      const ready = await t.call('GET', '/health/ready', { token: null });
      assert.equal(ready.status, 200);
      assert.equal(ready.body.status, 'ready');
      const v = await t.call('GET', '/version', { token: null });
      assert.equal(v.body.api_version, 'v1');
      assert.equal(v.body.features.spaces, true);
      const o = await t.call('GET', '/openapi.json', { token: null });
      assert.equal(o.status, 200);
      assert.equal(o.body.openapi, '3.1.0');
      for (const p of [
        '/v1/me/banks/{bank}/memories',
        '/v1/default/banks/{bank}/memories/recall',
        '/v1/me/spaces',
        '/v1/me/audit',
      ]) {
        assert.ok(o.body.paths[p], `openapi lacks ${p}`);
      }
      const d = await t.call('GET', '/docs', { token: null });
      assert.equal(d.status, 200);
      assert.match(String(d.body), /swagger-ui/);
      const asset = await t.app.request('/docs/assets/swagger-ui-bundle.js');
      assert.equal(asset.status, 200);
    });
  });
}
