/**
 * DNS rebinding: a web page on a name the attacker controls (rebound to 127.0.0.1) calls the
 * loopback server. Its requests carry `Host: <attacker name>` and, cross-site, its `Origin`.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { hostPolicy, mcpHostOptions } from '../../src/api/hosts.js';
import { createLogger } from '../../src/api/logger.js';
import { checkExposure, type RunningServer, startServer } from '../../src/runtime/server.js';
import { isLoopback, loadConfig } from '../../src/config/load.js';
import { handleMcpRequest } from '../../src/mcp/http.js';
import { ADMIN, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

const MCP_INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** A raw HTTP/1.1 request over a socket, so that `Host` is exactly what we send. */
function raw(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: any }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: u.hostname, port: u.port, method, path, headers, setHost: !('host' in headers) },
      (res) => {
        let text = '';
        res.on('data', (d) => {
          text += d;
        });
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {}
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('isLoopback', () => {
  test('only localhost and loopback IP literals, never a DNS name that starts like one', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1', 'LOCALHOST'])
      assert.equal(isLoopback(h), true, h);
    for (const h of [
      '127.evil.example',
      '127.0.0.1.nip.io',
      '127.',
      '0.0.0.0',
      '::',
      '10.0.0.1',
      'localhost.evil',
      '',
    ])
      assert.equal(isLoopback(h), false, h);
  });

  test('--host 127.evil.example without a token is refused like any other exposed address', () => {
    assert.throws(() => checkExposure(loadConfig({ host: '127.evil.example' }, {})), /refusing to listen/);
  });
});

for (const engine of ENGINES) {
  describe(`Host and Origin checks without an operator token (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine, { adminToken: '' });
    });
    after(() => t.close());

    const get = (headers: Record<string, string>) =>
      t.call('GET', '/v1/default/banks', { token: null, headers });

    test('a rebinding Host is refused with 403 host_not_allowed; loopback names with any port are served', async () => {
      for (const host of [
        'evil.example',
        'evil.example:8888',
        '127.evil.example:8888',
        '127.0.0.1.nip.io',
        'localhost.',
      ]) {
        const r = await get({ host });
        assert.equal(r.status, 403, host);
        assert.equal(r.body.error.code, 'host_not_allowed');
        assert.ok(r.body.error.request_id);
      }
      for (const host of [
        '127.0.0.1',
        '127.0.0.1:8888',
        'localhost:1234',
        'LOCALHOST',
        '[::1]:8888',
        '[::1]',
      ])
        assert.equal((await get({ host })).status, 200, host);
    });

    test('a foreign Origin is refused with 403 origin_not_allowed, even on a loopback Host', async () => {
      for (const origin of [
        'http://evil.example',
        'https://127.evil.example',
        'null',
        'file://',
        'garbage',
      ]) {
        const r = await get({ host: '127.0.0.1:8888', origin });
        assert.equal(r.status, 403, origin);
        assert.equal(r.body.error.code, 'origin_not_allowed');
      }
      for (const origin of ['http://127.0.0.1:8888', 'http://localhost:3000', 'http://[::1]:8888'])
        assert.equal((await get({ host: '127.0.0.1:8888', origin })).status, 200, origin);
    });

    test('a rebound page cannot write: the Retain is refused and no bank appears', async () => {
      const r = await t.call('POST', '/v1/default/banks/rebound/memories', {
        token: null,
        headers: { host: 'evil.example:8888', origin: 'http://evil.example:8888' },
        body: { items: [{ content: 'planted by a web page' }] },
      });
      assert.equal(r.status, 403);
      assert.equal(await t.services.store.getBank('default', 'rebound'), null);
    });

    test('/mcp, /docs and /openapi.json are guarded the same way; /health is not', async () => {
      const mcp = await t.call('POST', '/mcp', {
        token: null,
        headers: { ...MCP_HEADERS, host: 'evil.example' },
        body: MCP_INIT,
      });
      assert.equal(mcp.status, 403);
      assert.equal(mcp.body.error.code, 'host_not_allowed');
      for (const path of ['/docs', '/openapi.json', '/console'])
        assert.equal(
          (await t.call('GET', path, { token: null, headers: { host: 'evil.example' } })).status,
          403,
          path,
        );
      for (const path of ['/health', '/health/ready', '/health/live'])
        assert.equal(
          (await t.call('GET', path, { token: null, headers: { host: 'evil.example' } })).status,
          200,
          path,
        );
    });
  });

  describe(`allowed hosts and the operator token (${engine})`, () => {
    test('MNEMO_ALLOWED_HOSTS names a proxy host; it is then enforced even with a token', async () => {
      const t = await testApp(engine, { adminToken: '', allowedHosts: 'mnemo.example.com, [fd00::1]' });
      try {
        assert.equal(
          (await t.call('GET', '/v1/default/banks', { token: null, headers: { host: 'mnemo.example.com' } }))
            .status,
          200,
        );
        assert.equal(
          (
            await t.call('GET', '/v1/default/banks', {
              token: null,
              headers: { host: 'Mnemo.Example.com:443' },
            })
          ).status,
          200,
        );
        assert.equal(
          (await t.call('GET', '/v1/default/banks', { token: null, headers: { host: '[fd00::1]:8888' } }))
            .status,
          200,
        );
        assert.equal(
          (
            await t.call('GET', '/v1/default/banks', {
              token: null,
              headers: { host: 'mnemo.example.com', origin: 'https://mnemo.example.com' },
            })
          ).status,
          200,
        );
        assert.equal(
          (await t.call('GET', '/v1/default/banks', { token: null, headers: { host: 'other.example.com' } }))
            .status,
          403,
        );
      } finally {
        await t.close();
      }
      const withToken = await testApp(engine, { allowedHosts: 'mnemo.example.com' });
      try {
        const r = await withToken.call('GET', '/v1/default/banks', {
          headers: { host: 'other.example.com' },
        });
        assert.equal(r.status, 403);
        assert.equal(r.body.error.code, 'host_not_allowed');
      } finally {
        await withToken.close();
      }
    });

    test('with a token and no list any Host is served, but a cross-site Origin still is not', async () => {
      const t = await testApp(engine, { corsOrigins: 'https://app.example.org' });
      try {
        const get = (headers: Record<string, string>) => t.call('GET', '/v1/default/banks', { headers });
        assert.equal((await get({ host: 'mnemo.internal:8888' })).status, 200);
        assert.equal(
          (await get({ host: 'mnemo.internal:8888', origin: 'http://mnemo.internal:8888' })).status,
          200,
        );
        assert.equal((await get({ host: 'mnemo.internal', origin: 'https://app.example.org' })).status, 200);
        const r = await get({ host: 'mnemo.internal', origin: 'https://evil.example' });
        assert.equal(r.status, 403);
        assert.equal(r.body.error.code, 'origin_not_allowed');
      } finally {
        await t.close();
      }
    });
  });

  describe(`over a real socket (${engine})`, () => {
    let t: TestApp;
    let server: RunningServer;
    before(async () => {
      t = await testApp(engine, { adminToken: '' });
      const config = loadConfig({ logLevel: 'silent', port: 0, host: '127.0.0.1', worker: false }, {});
      server = await startServer(config, createLogger('silent'), t.services);
    });
    after(async () => {
      await server.close();
      await t.close();
    });

    test('the Host a browser sends after rebinding is refused; the real one is served', async () => {
      const port = new URL(server.url).port;
      const evil = await raw(server.url, 'GET', '/v1/default/banks', { host: `rebind.evil.example:${port}` });
      assert.equal(evil.status, 403);
      assert.equal(evil.body.error.code, 'host_not_allowed');
      assert.equal((await raw(server.url, 'GET', '/v1/default/banks', {})).status, 200);
      assert.equal(
        (await raw(server.url, 'GET', '/v1/default/banks', { host: `localhost:${port}` })).status,
        200,
      );
      const mcp = await raw(
        server.url,
        'POST',
        '/mcp',
        { ...MCP_HEADERS, host: `rebind.evil.example:${port}` },
        JSON.stringify(MCP_INIT),
      );
      assert.equal(mcp.status, 403);
      const ok = await raw(server.url, 'POST', '/mcp', MCP_HEADERS, JSON.stringify(MCP_INIT));
      assert.equal(ok.status, 200);
    });
  });
}

describe('the MCP transport is wired to the same list', () => {
  const ctx = () => ({
    services: {} as never,
    projectId: 'default',
    actor: { type: 'anonymous' as const },
    scopes: 'all' as const,
    requestId: 'r',
    log: createLogger('silent'),
  });
  const mcpRequest = (headers: Record<string, string>) =>
    new Request('http://127.0.0.1:8888/mcp', {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...headers },
      body: JSON.stringify(MCP_INIT),
    });

  test('the transport itself refuses a foreign Host or Origin and serves loopback and listed hosts', async () => {
    const policy = hostPolicy(loadConfig({ allowedHosts: 'mnemo.example.com' }, {}));
    const send = async (headers: Record<string, string>) => {
      const req = mcpRequest(headers);
      return (await handleMcpRequest(req, ctx(), mcpHostOptions(policy, req))).status;
    };
    assert.equal(await send({ host: 'evil.example:8888' }), 403);
    assert.equal(await send({ host: '127.0.0.1:8888', origin: 'http://evil.example' }), 403);
    assert.equal(await send({ host: '127.0.0.1:8888' }), 200);
    assert.equal(await send({ host: 'localhost:9999', origin: 'http://localhost:9999' }), 200);
    assert.equal(await send({ host: 'mnemo.example.com' }), 200);
    assert.equal(await send({ host: '[::1]:8888' }), 200);
  });

  test('with a token and no list the transport checks Origins only', async () => {
    const policy = hostPolicy(loadConfig({ adminToken: ADMIN }, {}));
    const send = async (headers: Record<string, string>) => {
      const req = mcpRequest(headers);
      return (await handleMcpRequest(req, ctx(), mcpHostOptions(policy, req))).status;
    };
    assert.equal(await send({ host: 'mnemo.internal' }), 200);
    assert.equal(await send({ host: 'mnemo.internal', origin: 'http://mnemo.internal' }), 200);
    assert.equal(await send({ host: 'mnemo.internal', origin: 'http://evil.example' }), 403);
  });
});
