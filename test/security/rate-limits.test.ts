import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ENGINES } from '../helpers/engines.js';
import { bankPath, type TestApp, type TestResponse, testApp } from '../helpers/app.js';

const me = (bank: string, rest = '') => bankPath(bank, rest, '/v1/me');

/** A 429 with the error body and headers; `remaining` is what is left of the limit (0 for requests). */
function assert429(r: TestResponse, limit: string, remaining = 0) {
  assert.equal(r.status, 429, JSON.stringify(r.body));
  assert.equal(r.body.error.code, 'rate_limited');
  assert.equal(r.body.error.limit, limit);
  assert.equal(typeof r.body.error.request_id, 'string');
  const retry = Number(r.headers.get('retry-after'));
  assert.ok(retry >= 1, `Retry-After ${r.headers.get('retry-after')}`);
  assert.equal(r.headers.get('ratelimit-remaining'), String(remaining));
  assert.ok(Number(r.headers.get('ratelimit-limit')) > 0);
  assert.equal(Number(r.headers.get('ratelimit-reset')), retry);
}

for (const engine of ENGINES) {
  describe(`rate limits and quotas (${engine})`, () => {
    let t: TestApp;
    // An injectable clock: windows are fixed (per minute, per UTC day), so moving it past the
    // window's end is "waiting" for the reset.
    let clock = Date.parse('2030-01-01T10:00:05Z');
    const keys: Record<string, string> = {};
    const mkKey = async (project: string, name: string) => {
      const r = await t.call('POST', `/v1/default/projects/${project}/keys`, {
        body: { name, scopes: ['retain', 'recall', 'admin'] },
      });
      assert.equal(r.status, 201);
      return r.body.key as string;
    };
    const setLimits = async (project: string, limits: Record<string, number | null>) => {
      const r = await t.call('PATCH', `/v1/default/projects/${project}`, { body: { limits } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    };

    before(async () => {
      t = await testApp(engine, { now: () => new Date(clock) });
      for (const p of ['rpm', 'perkey', 'items', 'stored']) {
        assert.equal(
          (await t.call('POST', '/v1/default/projects', { body: { id: p, name: p } })).status,
          201,
        );
        keys[p] = await mkKey(p, 'a');
      }
      keys.perkey2 = await mkKey('perkey', 'b');
    });
    after(() => t.close());

    test('requests per minute: headers count down, the next request is 429, the next window recovers', async () => {
      await setLimits('rpm', { requests_per_minute: 3 });
      for (let i = 0; i < 3; i++) {
        const r = await t.call('GET', me('none', '/memories'), { token: keys.rpm });
        assert.equal(r.status, 404); // counted and answered normally (the bank does not exist)
        assert.equal(r.headers.get('ratelimit-limit'), '3');
        assert.equal(r.headers.get('ratelimit-remaining'), String(2 - i));
        assert.equal(r.headers.get('ratelimit-reset'), '55');
      }
      const denied = await t.call('POST', me('rpm-bank', '/memories'), {
        token: keys.rpm,
        body: { items: [{ content: 'must not be stored' }] },
      });
      assert429(denied, 'requests_per_minute');
      assert.equal(denied.headers.get('retry-after'), '55');
      // The operator is never limited, and the rejected request stored nothing.
      assert.equal((await t.call('GET', '/v1/me/spaces', { token: keys.rpm })).status, 429);
      assert.equal((await t.call('GET', '/v1/default/projects/rpm')).status, 200);
      clock += 55_000; // the next minute
      const ok = await t.call('GET', me('rpm-bank', '/memories'), { token: keys.rpm });
      assert.equal(ok.status, 404, 'the bank of the rejected retain was never created');
      assert.equal(ok.headers.get('ratelimit-remaining'), '2');
      assert.equal(ok.headers.get('ratelimit-reset'), '60');
      // null lifts the limit: no more counting, no headers
      await setLimits('rpm', { requests_per_minute: null });
      const free = await t.call('GET', '/v1/me/spaces', { token: keys.rpm });
      assert.equal(free.status, 200);
      assert.equal(free.headers.get('ratelimit-limit'), null);
    });

    test('per-key requests per minute: one key is stopped, another key of the project is not', async () => {
      await setLimits('perkey', { requests_per_minute_per_key: 2, requests_per_minute: 10 });
      for (let i = 0; i < 2; i++)
        assert.equal((await t.call('GET', '/v1/me/spaces', { token: keys.perkey })).status, 200);
      assert429(await t.call('GET', '/v1/me/spaces', { token: keys.perkey }), 'requests_per_minute_per_key');
      const other = await t.call('GET', '/v1/me/spaces', { token: keys.perkey2 });
      assert.equal(other.status, 200);
      // the tightest counter is reported: this key has 1 left, the project 6
      assert.equal(other.headers.get('ratelimit-limit'), '2');
      assert.equal(other.headers.get('ratelimit-remaining'), '1');
      const usage = await t.call('GET', '/v1/default/projects/perkey');
      assert.equal(usage.body.usage.requests_this_minute, 4);
      assert.equal(usage.body.effective_limits.requests_per_minute_per_key, 2);
    });

    test('retained items per day: a batch over the quota is 429 and stores nothing; the next day recovers', async () => {
      await setLimits('items', { retained_items_per_day: 5 });
      const items = (n: number, tag: string) =>
        Array.from({ length: n }, (_, i) => ({ content: `${tag} item ${i}` }));
      assert.equal(
        (
          await t.call('POST', me('daily', '/memories'), {
            token: keys.items,
            body: { items: items(3, 'first') },
          })
        ).status,
        200,
      );
      const over = await t.call('POST', me('daily', '/memories'), {
        token: keys.items,
        body: { items: items(3, 'second') },
      });
      assert429(over, 'retained_items_per_day', 2);
      assert.equal(over.headers.get('ratelimit-limit'), '5');
      // a new bank is not even created by a rejected retain, sync or async
      const newBank = await t.call('POST', me('never', '/memories'), {
        token: keys.items,
        body: { items: items(3, 'x') },
      });
      assert429(newBank, 'retained_items_per_day', 2);
      const asyncOver = await t.call('POST', me('never', '/memories'), {
        token: keys.items,
        body: { async: true, items: items(3, 'x') },
      });
      assert429(asyncOver, 'retained_items_per_day', 2);
      assert.equal((await t.call('GET', me('never'), { token: keys.items })).status, 404);
      const list = await t.call('GET', me('daily', '/memories'), { token: keys.items });
      assert.deepEqual(list.body.items.map((m: any) => m.text).sort(), [
        'first item 0',
        'first item 1',
        'first item 2',
      ]);
      // what still fits is accepted
      assert.equal(
        (
          await t.call('POST', me('daily', '/memories'), {
            token: keys.items,
            body: { items: items(2, 'fits') },
          })
        ).status,
        200,
      );
      assert429(
        await t.call('POST', me('daily', '/memories'), {
          token: keys.items,
          body: { items: items(1, 'no') },
        }),
        'retained_items_per_day',
        0,
      );
      // a failed retain gives its items back (an unknown space is a 404 after charging)
      await setLimits('items', { retained_items_per_day: 6 });
      const failed = await t.call('POST', `${me('spaced', '/memories')}?space=nope`, {
        token: keys.items,
        body: { items: items(1, 'f') },
      });
      assert.equal(failed.status, 404);
      assert.equal((await t.call('GET', '/v1/default/projects/items')).body.usage.retained_items_today, 5);
      const day = 86_400_000;
      clock = Math.floor(clock / day) * day + day + 1000; // just after midnight UTC
      assert.equal(
        (
          await t.call('POST', me('daily', '/memories'), {
            token: keys.items,
            body: { items: items(5, 'next day') },
          })
        ).status,
        200,
      );
      assert.equal((await t.call('GET', '/v1/default/projects/items')).body.usage.retained_items_today, 5);
    });

    test('stored memories: a retain that would pass the quota is 429; deleting makes room', async () => {
      await setLimits('stored', { stored_memories: 4 });
      const r = await t.call('POST', me('full', '/memories'), {
        token: keys.stored,
        body: { items: [{ content: 'one' }, { content: 'two' }, { content: 'three' }] },
      });
      assert.equal(r.status, 200);
      const over = await t.call('POST', me('other', '/memories'), {
        token: keys.stored,
        body: { items: [{ content: 'four' }, { content: 'five' }] },
      });
      assert429(over, 'stored_memories', 1);
      assert.equal((await t.call('GET', me('other'), { token: keys.stored })).status, 404);
      const gone = await t.call('DELETE', me('full', `/memories/${r.body.memory_ids[0]}`), {
        token: keys.stored,
      });
      assert.equal(gone.status, 200);
      assert.equal(
        (
          await t.call('POST', me('other', '/memories'), {
            token: keys.stored,
            body: { items: [{ content: 'four' }, { content: 'five' }] },
          })
        ).status,
        200,
      );
      const p = await t.call('GET', '/v1/default/projects/stored');
      assert.equal(p.body.usage.stored_memories, 4);
      assert.equal(p.body.effective_limits.stored_memories, 4);
      assert.equal(p.body.limits.stored_memories, 4);
    });
  });

  describe(`default limits from the configuration (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      // A fixed clock: on the real one the minute could roll over between the requests.
      t = await testApp(engine, {
        now: () => new Date('2030-01-01T10:00:05Z'),
        defaultRequestsPerMinutePerKey: 2,
        defaultStoredMemories: 1,
      });
    });
    after(() => t.close());

    test('defaults apply to projects without their own limits; a project setting wins', async () => {
      const key = (
        await t.call('POST', '/v1/default/projects/default/keys', { body: { name: 'k', scopes: ['retain'] } })
      ).body.key;
      const once = await t.call('POST', bankPath('d', '/memories'), {
        token: key,
        body: { items: [{ content: 'a' }] },
      });
      assert.equal(once.status, 200);
      assert.equal(once.headers.get('ratelimit-limit'), '2');
      assert429(
        await t.call('POST', bankPath('d', '/memories'), { token: key, body: { items: [{ content: 'b' }] } }),
        'stored_memories',
        0,
      );
      assert429(
        await t.call('POST', bankPath('d', '/memories'), { token: key, body: { items: [{ content: 'b' }] } }),
        'requests_per_minute_per_key',
      );
      await t.call('PATCH', '/v1/default/projects/default', { body: { limits: { stored_memories: null } } });
      const p = await t.call('GET', '/v1/default/projects/default');
      const { requests_per_minute, requests_per_minute_per_key, retained_items_per_day, stored_memories } =
        p.body.effective_limits;
      assert.deepEqual(
        { requests_per_minute, requests_per_minute_per_key, retained_items_per_day, stored_memories },
        {
          requests_per_minute: null,
          requests_per_minute_per_key: 2,
          retained_items_per_day: null,
          stored_memories: null,
        },
      );
      assert.equal(
        (await t.call('POST', bankPath('d', '/memories'), { body: { items: [{ content: 'b' }] } })).status,
        200,
      );
    });
  });
}
