/**
 * Key-id existence must not show in the work a refusal costs: an unknown key id goes through
 * the same steps (record lookup, keyed hash, comparison) as a known id with a wrong secret, a
 * revoked key or an expired one. Checked by the sequence of store calls, not by timing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { verifyKey } from '../../src/core/projects.js';
import type { Store } from '../../src/store/store.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { ENGINES, openTestStore } from '../helpers/engines.js';
import { wrongSecret } from '../helpers/keys.js';

/** The store, recording the name of every method called on it (the real database answers). */
function recording(store: Store) {
  const calls: string[] = [];
  const proxy = new Proxy(store, {
    get(target, prop, _receiver) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== 'function' || prop === 'close' || prop === 'dispose') return value;
      return (...args: unknown[]) => {
        calls.push(String(prop));
        return value.apply(target, args);
      };
    },
  });
  return { proxy, calls };
}

for (const engine of ENGINES) {
  describe(`refused keys cost the same work whether the id exists or not (${engine})`, () => {
    let t: TestApp;
    let rec: ReturnType<typeof recording>;
    let clock = Date.parse('2031-01-01T00:00:00Z');
    const keys: Record<string, string> = {};
    before(async () => {
      rec = recording(await openTestStore(engine));
      t = await testApp(engine, { store: rec.proxy, now: () => new Date(clock) });
      const mint = async (name: string, extra: Record<string, unknown> = {}) =>
        (
          await t.call('POST', '/v1/default/projects/default/keys', {
            body: { name, scopes: ['recall'], ...extra },
          })
        ).body;
      const good = await mint('good');
      keys.good = good.key;
      keys.wrong = wrongSecret(good.key);
      const revoked = await mint('revoked');
      await t.call('DELETE', `/v1/default/projects/default/keys/${revoked.id}`);
      keys.revoked = revoked.key;
      const expiring = await mint('expiring', { expires_at: '2031-01-02T00:00:00Z' });
      keys.expired = expiring.key;
      // an id that was never minted, with a well-formed secret
      keys.unknown = `mk_${'Z'.repeat(12)}_${good.key.slice(16)}`;
      clock = Date.parse('2031-01-03T00:00:00Z');
    });
    after(() => t.close());

    test('verifyKey: an unknown id is hashed and compared like a known one with a wrong secret', async () => {
      const services = { ...t.services, store: rec.proxy };
      const steps: Record<string, string[]> = {};
      for (const kind of ['wrong', 'unknown', 'revoked', 'expired', 'good']) {
        rec.calls.length = 0;
        const result = await verifyKey(services, keys[kind]!);
        assert.equal(result === null, kind !== 'good', kind);
        steps[kind] = [...rec.calls];
      }
      // the keyed hash reads the install's pepper: `setting` is the hash being computed
      assert.deepEqual(steps.wrong, ['getApiKey', 'setting']);
      for (const kind of ['unknown', 'revoked', 'expired', 'good'])
        assert.deepEqual(steps[kind], steps.wrong, kind);
    });

    test('over HTTP a refused unknown id and a refused wrong secret make the same store calls', async () => {
      const sequence = async (key: string) => {
        rec.calls.length = 0;
        const r = await t.call('GET', '/v1/me/banks', { token: key });
        assert.equal(r.status, 401);
        return [...rec.calls];
      };
      const wrong = await sequence(keys.wrong!);
      const unknown = await sequence(keys.unknown!);
      assert.ok(wrong.includes('setting'), `the secret is hashed: ${wrong}`);
      assert.deepEqual(unknown, wrong);
      assert.deepEqual(await sequence(keys.revoked!), wrong);
    });
  });
}
