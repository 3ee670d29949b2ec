/**
 * User-chosen keys named like `Object.prototype` members. Looking such a key up in a plain object
 * finds the inherited member (`shape['constructor']` is `Object`), which used to answer 500 for a
 * config key, and `__proto__` is silently dropped by JSON validation. Now an unknown config key
 * of any name is a 400 naming it, a `__proto__` key anywhere in a body is a 400, and where a user
 * key is only data (metadata, tags, directive names, entity names) it is kept as it is.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ENGINES } from '../helpers/engines.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';

const PROTO_NAMES = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', 'isPrototypeOf'];

/** A JSON object with one own member `key` (JSON.stringify of `{ [key]: v }` drops `__proto__`). */
const member = (key: string, value: unknown) => `{${JSON.stringify(key)}:${JSON.stringify(value)}}`;

for (const engine of ENGINES) {
  describe(`keys named like Object.prototype members (${engine})`, () => {
    let t: TestApp;

    before(async () => {
      t = await testApp(engine);
      assert.equal((await t.call('PUT', bankPath('proto'), { body: {} })).status, 200);
      assert.equal(
        (
          await t.call('PATCH', bankPath('proto', '/config'), {
            body: { updates: { disposition_empathy: 4 } },
          })
        ).status,
        200,
      );
    });
    after(() => t.close());

    for (const name of PROTO_NAMES) {
      test(`config key '${name}' is a 400 naming it, and changes nothing`, async () => {
        for (const value of [1, 'x', null, { encryption: 'managed' }]) {
          const r = await t.call('PATCH', bankPath('proto', '/config'), {
            rawBody: `{"updates":${member(name, value)}}`,
            headers: { 'content-type': 'application/json' },
          });
          assert.equal(r.status, 400, `${name}=${JSON.stringify(value)}: ${JSON.stringify(r.body)}`);
          assert.equal(r.body.error.code, 'validation_error');
          assert.ok(r.body.error.message.includes(name), r.body.error.message);
        }
        const view = await t.call('GET', bankPath('proto', '/config'));
        assert.deepEqual(view.body.overrides, { disposition_empathy: 4 });
        assert.equal(view.body.config.encryption, 'none');
      });
    }

    test('a __proto__ key anywhere in a body is a 400, also written with escapes', async () => {
      const bodies = [
        {
          path: bankPath('proto', '/memories'),
          body: `{"items":[{"content":"a","metadata":{"__proto__":{"x":"1"}}}]}`,
        },
        {
          path: bankPath('proto', '/memories'),
          body: `{"items":[{"content":"a"}],"__proto__":{"async":true}}`,
        },
        {
          path: bankPath('proto', '/config'),
          body: `{"updates":{"\\u005f_proto__":{"encryption":"managed"}}}`,
        },
        { path: '/v1/default/projects/default', body: `{"limits":{"__proto__":{"requests_per_minute":1}}}` },
      ];
      for (const b of bodies) {
        const method = b.path.endsWith('/memories') ? 'POST' : 'PATCH';
        const r = await t.call(method, b.path, {
          rawBody: b.body,
          headers: { 'content-type': 'application/json' },
        });
        assert.equal(r.status, 400, `${b.body}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error.code, 'validation_error');
        assert.match(r.body.error.message, /__proto__/);
      }
      assert.equal((await t.call('GET', bankPath('proto', '/memories'))).body.items.length, 0);
    });

    test('metadata, tags, directive and entity names of those names are kept as data', async () => {
      const names = PROTO_NAMES.filter((n) => n !== '__proto__');
      const metadata = Object.fromEntries(names.map((n) => [n, `v-${n}`]));
      const r = await t.call('POST', bankPath('proto', '/memories'), {
        body: {
          items: [
            {
              content: 'The constructor valueOf report was filed by Dana',
              metadata,
              tags: names,
              entities: names.map((n) => ({ text: n, type: n })),
            },
          ],
        },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const list = await t.call('GET', bankPath('proto', '/memories?tags=constructor&tags_match=all'));
      assert.equal(list.status, 200, JSON.stringify(list.body));
      assert.equal(list.body.items.length, 1);
      assert.deepEqual(list.body.items[0].metadata, metadata);
      assert.deepEqual([...list.body.items[0].tags].sort(), [...names].sort());
      const recall = await t.call('POST', bankPath('proto', '/memories/recall'), {
        body: { query: 'constructor report', tags: ['toString'] },
      });
      assert.equal(recall.status, 200, JSON.stringify(recall.body));
      assert.ok(recall.body.results.length >= 1);
      const entities = await t.call('GET', bankPath('proto', '/entities'));
      assert.deepEqual(entities.body.items.map((e: any) => e.name).sort(), [...names].sort());
      for (const name of names) {
        const d = await t.call('POST', bankPath('proto', '/directives'), {
          body: { name, text: `rule ${name}`, tags: [name] },
        });
        assert.equal(d.status, 201, JSON.stringify(d.body));
        assert.equal(d.body.name, name);
      }
      const ds = await t.call('GET', bankPath('proto', '/directives'));
      assert.deepEqual(ds.body.items.map((d: any) => d.name).sort(), [...names].sort());
    });

    test('an unknown body field of those names is reported as ignored, never applied', async () => {
      for (const name of PROTO_NAMES.filter((n) => n !== '__proto__')) {
        const r = await t.call('PATCH', '/v1/default/projects/default', {
          rawBody: `{"limits":${member(name, 1)}}`,
          headers: { 'content-type': 'application/json' },
        });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(r.headers.get('x-ignored-fields'), `limits.${name}`);
        assert.deepEqual(r.body.limits, {});
      }
    });

    test('a /docs asset named like a prototype member is a 404', async () => {
      for (const name of PROTO_NAMES) {
        const r = await t.call('GET', `/docs/assets/${name}`, { token: null });
        assert.equal(r.status, 404, `${name}: ${r.status}`);
      }
    });
  });
}
