/**
 * Secrets in logs at any depth: `req.headers.authorization`, `x.y.key`, an error's request
 * headers. Output is captured from pino's stream, as an operator's log shipper would read it.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { createApp } from '../../src/api/app.js';
import { createLogger, isSecretField } from '../../src/api/logger.js';
import { loadConfig } from '../../src/config/load.js';
import { compose } from '../../src/runtime/compose.js';
import { ENGINES, openTestStore } from '../helpers/engines.js';

const ADMIN = 'redaction-admin-token';
const SECRET = 'S3CRET-never-in-logs';

function logSink() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines, text: () => lines.join('\n') };
}

describe('log redaction at any depth', () => {
  test('nested authorization, token, key, secrets and passwords are redacted wherever they sit', () => {
    const sink = logSink();
    const log = createLogger('info', sink.stream);
    log.info(
      { req: { headers: { authorization: `Bearer ${SECRET}`, Cookie: `s=${SECRET}`, host: 'h' } } },
      'a',
    );
    log.info({ x: { y: { key: SECRET, keyId: 'kid-visible' } } }, 'b');
    log.info({ a: [{ b: { c: { d: { e: { token: SECRET, tokens: 12 } } } } }] }, 'c');
    log.info({ cfg: { llmApiKey: SECRET, masterKey: SECRET, adminToken: SECRET, 'x-api-key': SECRET } }, 'd');
    log.info({ deep: { one: { two: { three: { clientSecret: SECRET, password: SECRET } } } } }, 'e');
    log.child({ ctx: { auth: { token: SECRET } } }).info('f');
    const err = Object.assign(new Error('upstream failed'), {
      request: { headers: { Authorization: `Bearer ${SECRET}` } },
    });
    log.error({ err }, 'g');
    const headers = new Headers({ authorization: `Bearer ${SECRET}`, accept: 'x' });
    log.info({ headers, map: new Map([['apiKey', SECRET]]) }, 'h');
    const text = sink.text();
    assert.equal(sink.lines.length, 8);
    assert.ok(!text.includes(SECRET), text);
    const records = sink.lines.map((l) => JSON.parse(l));
    assert.equal(records[0].req.headers.authorization, '[redacted]');
    assert.equal(records[0].req.headers.host, 'h', 'other fields stay');
    assert.equal(records[1].x.y.key, '[redacted]');
    assert.equal(records[1].x.y.keyId, 'kid-visible', 'a key id is not a secret');
    assert.equal(records[2].a[0].b.c.d.e.tokens, 12, 'a token count is not a secret');
    assert.equal(records[6].err.message, 'upstream failed');
    assert.equal(records[6].err.request.headers.Authorization, '[redacted]');
    assert.ok(records[6].err.stack);
    assert.equal(records[7].headers.accept, 'x');
  });

  test('cycles and absurd depth neither hang nor throw', () => {
    const sink = logSink();
    const log = createLogger('info', sink.stream);
    const cyclic: Record<string, unknown> = { token: SECRET };
    cyclic.self = cyclic;
    let deep: Record<string, unknown> = { key: SECRET };
    for (let i = 0; i < 10_000; i++) deep = { next: deep };
    log.info({ cyclic, deep }, 'x');
    assert.equal(sink.lines.length, 1);
    assert.ok(!sink.text().includes(SECRET));
  });

  test('field names: secrets by name, ids and counts kept', () => {
    for (const n of [
      'authorization',
      'Proxy-Authorization',
      'token',
      'key',
      'apiKey',
      'api_key',
      'masterKey',
      'secret',
    ])
      assert.equal(isSecretField(n), true, n);
    for (const n of ['keyId', 'key_id', 'tokens', 'maxTokens', 'bank', 'requestId'])
      assert.equal(isSecretField(n), false, n);
  });
});

for (const engine of ENGINES) {
  describe(`an unhandled error's nested credentials never reach the log (${engine})`, () => {
    let store: Awaited<ReturnType<typeof openTestStore>>;
    const sink = logSink();
    let app: ReturnType<typeof createApp>;
    before(async () => {
      store = await openTestStore(engine);
      const config = loadConfig({ adminToken: ADMIN, logLevel: 'info' }, {});
      // A driver-like error that carries the request it made, headers included.
      const failing = Object.create(store) as typeof store;
      failing.listBanks = async () => {
        throw Object.assign(new Error('backend exploded'), {
          config: { headers: { authorization: `Bearer ${SECRET}` }, auth: { key: SECRET } },
        });
      };
      app = createApp(await compose(config, { store: failing }), createLogger('info', sink.stream));
    });
    after(() => store.dispose());

    test('the 500 is logged with its error, the credentials in it redacted', async () => {
      const r = await app.request('/v1/default/banks', { headers: { authorization: `Bearer ${ADMIN}` } });
      assert.equal(r.status, 500);
      const text = sink.text();
      assert.match(text, /backend exploded/);
      assert.ok(!text.includes(SECRET), text);
      assert.ok(!text.includes(ADMIN), 'the operator token is not logged either');
      const rec = sink.lines.map((l) => JSON.parse(l)).find((x) => x.msg === 'unhandled error');
      assert.equal(rec.err.config.headers.authorization, '[redacted]');
      assert.equal(rec.err.config.auth.key, '[redacted]');
    });
  });
}
