/**
 * Stopping the server: a request still running when its client hung up is finished before the
 * server reports itself closed (and the store it uses is closed after it, not under it).
 */
import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { after, test } from 'node:test';
import { createLogger } from '../../src/api/logger.js';
import { startServer } from '../../src/runtime/server.js';
import { loadConfig } from '../../src/config/load.js';
import { openTestStore } from '../helpers/engines.js';

const TOKEN = 'close-test-token';

test('close waits for a request whose client has gone', async () => {
  const store = await openTestStore('pglite');
  after(() => store.dispose());
  const events: string[] = [];
  const listBanks = store.listBanks.bind(store);
  // The real store, held at a gate: the request is still running when the client gives up, and
  // until the test has seen close() wait for it.
  const signals = new EventEmitter();
  const handlerStarted = once(signals, 'started');
  store.listBanks = async (...args) => {
    events.push('handler started');
    const released = once(signals, 'release');
    signals.emit('started');
    await released;
    const banks = await listBanks(...args);
    events.push('handler finished');
    return banks;
  };
  const config = loadConfig({ port: 0, adminToken: TOKEN, logLevel: 'silent', worker: false }, {});
  const server = await startServer(config, createLogger('silent'), { store });
  const hangUp = new AbortController();
  const request = fetch(`${server.url}/v1/default/banks`, {
    headers: { authorization: `Bearer ${TOKEN}` },
    signal: hangUp.signal,
  });
  await handlerStarted;
  hangUp.abort();
  await assert.rejects(request, { name: 'AbortError' });
  const closing = server.close().then(() => events.push('closed'));
  // A close that did not wait for the handler would be done well within this.
  const first = await Promise.race([
    closing.then(() => 'closed'),
    new Promise((r) => setTimeout(() => r('still closing'), 50)),
  ]);
  assert.equal(first, 'still closing', 'close() returned while a request was still running');
  signals.emit('release');
  await closing;
  assert.deepEqual(events, ['handler started', 'handler finished', 'closed']);
});
