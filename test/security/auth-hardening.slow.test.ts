import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { checkExposure } from '../../src/runtime/server.js';
import { loadConfig } from '../../src/config/load.js';
import { ENGINES, seedDataDir } from '../helpers/engines.js';
import { ADMIN, type TestApp, testApp } from '../helpers/app.js';
import { http, runCli, startChildServer } from './servers.js';

describe('the operator token beyond loopback', () => {
  test('listening beyond loopback needs MNEMO_ADMIN_TOKEN (or an explicit --insecure-no-auth)', () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.10', 'example.com']) {
      assert.throws(
        () => checkExposure(loadConfig({ host }, {})),
        /refusing to listen on .* without MNEMO_ADMIN_TOKEN/,
      );
      assert.doesNotThrow(() => checkExposure(loadConfig({ host, adminToken: 't' }, {})));
      assert.doesNotThrow(() => checkExposure(loadConfig({ host, insecureNoAuth: true }, {})));
    }
    for (const host of ['127.0.0.1', 'localhost', '::1'])
      assert.doesNotThrow(() => checkExposure(loadConfig({ host }, {})));
  });

  test('mnemo serve --host 0.0.0.0 refuses to start without a token, and with one demands it', async () => {
    const refused = await runCli(['serve', '--host', '0.0.0.0', '--port', '0', '--no-worker'], {
      MNEMO_ADMIN_TOKEN: '',
      MNEMO_DATA_DIR: '/nonexistent/never-created',
    });
    assert.equal(refused.code, 1);
    assert.match(refused.output, /refusing to listen on 0\.0\.0\.0 without MNEMO_ADMIN_TOKEN/);
    await seedDataDir(`/tmp/mnemo-exposed-${process.pid}`, 'migrated'); // no initdb in a test
    const server = await startChildServer({ MNEMO_ADMIN_TOKEN: 'exposed-token', MNEMO_LOG_LEVEL: 'silent' }, [
      '--host',
      '0.0.0.0',
      '--data-dir',
      `/tmp/mnemo-exposed-${process.pid}`,
      '--no-worker',
    ]);
    try {
      const url = server.url.replace('0.0.0.0', '127.0.0.1');
      assert.equal((await http(url, 'GET', '/v1/default/spaces')).status, 401);
      assert.equal((await http(url, 'GET', '/v1/default/spaces', { token: 'wrong' })).status, 401);
      assert.equal((await http(url, 'GET', '/v1/default/spaces', { token: 'exposed-token' })).status, 200);
      assert.equal((await http(url, 'GET', '/v1/default/projects')).status, 401);
    } finally {
      await server.stop();
      rmSync(`/tmp/mnemo-exposed-${process.pid}`, { recursive: true, force: true });
    }
  });
});

for (const engine of ENGINES) {
  describe(`keys at rest, expiry, CORS and headers (${engine})`, () => {
    let t: TestApp;
    let clock = Date.parse('2031-06-01T12:00:00Z');
    before(async () => {
      t = await testApp(engine, { now: () => new Date(clock) });
    });
    after(() => t.close());

    test('only a keyed hash of a key is stored: the secret appears nowhere in the database', async () => {
      const k = await t.call('POST', '/v1/default/projects/default/keys', {
        body: { name: 'h', scopes: ['recall'] },
      });
      const secret = k.body.key.slice(16);
      const row = (await t.services.store.getApiKey(k.body.id))!;
      assert.ok(!JSON.stringify(row).includes(secret));
      assert.match(row.secret_hash, /^[A-Za-z0-9_-]{43}$/, 'HMAC-SHA256, base64url');
      // the per-install pepper is what makes it keyed: the same secret hashes differently elsewhere
      const other = await testApp(engine);
      try {
        const pepperA = await t.services.store.setting('key_pepper', () => 'unused');
        const pepperB = await other.services.store.setting('key_pepper', () => 'unused');
        assert.notEqual(pepperA, pepperB);
      } finally {
        await other.close();
      }
    });

    test('an expired key is refused at its expiry, without any clean-up job', async () => {
      const k = await t.call('POST', '/v1/default/projects/default/keys', {
        body: { name: 'short', scopes: ['admin'], expires_at: new Date(clock + 60_000).toISOString() },
      });
      assert.equal((await t.call('GET', '/v1/default/spaces', { token: k.body.key })).status, 200);
      clock += 60_000;
      const r = await t.call('GET', '/v1/default/spaces', { token: k.body.key });
      assert.equal(r.status, 401);
      assert.equal(r.body.error.code, 'unauthenticated');
    });

    test('CORS is off by default; security headers are on every answer', async () => {
      const pre = await t.call('OPTIONS', '/v1/default/spaces', {
        token: null,
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
      });
      assert.equal(pre.headers.get('access-control-allow-origin'), null);
      const r = await t.call('GET', '/health', { headers: { origin: 'https://evil.example' } });
      assert.equal(r.headers.get('access-control-allow-origin'), null);
      assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(r.headers.get('x-frame-options'), 'SAMEORIGIN');
      assert.ok(r.headers.get('strict-transport-security'));
      const e = await t.call('GET', '/v1/default/nothing');
      assert.equal(e.headers.get('x-content-type-options'), 'nosniff');
    });

    test('CORS, when configured, answers only the listed origins', async () => {
      const c = await testApp(engine, { corsOrigins: 'https://app.example, https://other.example' });
      try {
        const ok = await c.call('OPTIONS', '/v1/default/spaces', {
          token: null,
          headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
        });
        assert.equal(ok.headers.get('access-control-allow-origin'), 'https://app.example');
        const no = await c.call('GET', '/v1/default/spaces', { headers: { origin: 'https://evil.example' } });
        assert.notEqual(no.headers.get('access-control-allow-origin'), 'https://evil.example');
        // and the server refuses the cross-site request itself (hosts.test.ts), not only the browser
        assert.equal(no.status, 403);
        assert.equal(no.body.error.code, 'origin_not_allowed');
      } finally {
        await c.close();
      }
    });

    test('the operator token is compared as a whole: prefixes and longer strings fail', async () => {
      for (const token of [ADMIN.slice(0, -1), `${ADMIN}x`, ADMIN.toUpperCase(), `${ADMIN} extra`]) {
        assert.equal(
          (await t.call('GET', '/v1/default/spaces', { token })).status,
          401,
          JSON.stringify(token),
        );
      }
    });
  });
}
