/**
 * A write that creates its bank on first use must not leave that bank behind when it is
 * refused: everything that can refuse it is checked before the bank is created, whatever the
 * entry point (HTTP, MCP, the core function a queued operation or stdio calls).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AppError } from '../../src/core/errors.js';
import { retain } from '../../src/core/retain/retain.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
/** Contents nothing can be remembered from, or no column can hold. */
const REFUSED = [
  '\u0000',
  '\u0000 \u0000',
  '\u0000\u0000\u0000',
  ' \u0000\n',
  '   ',
  '\t\n',
  'ok\u0000',
  '\ud800',
  'x\udc00y',
];

for (const engine of ENGINES) {
  describe(`a refused write creates no bank (${engine})`, () => {
    let t: TestApp;
    let n = 0;
    before(async () => {
      t = await testApp(engine);
    });
    after(() => t.close());

    const bankCount = async () => (await t.services.store.listBanks('default', {})).length;
    const fresh = () => `fresh-${engine}-${n++}`;
    const mcp = (args: Record<string, unknown>) =>
      t.call('POST', '/mcp', {
        headers: MCP_HEADERS,
        body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'retain', arguments: args } },
      });

    test('MCP retain of NUL-only, blank or unstorable text fails and leaves no bank', async () => {
      const before = await bankCount();
      for (const content of REFUSED) {
        const bank = fresh();
        const r = await mcp({ bank, items: [{ content }] });
        const failed = r.status === 400 || r.body?.result?.isError === true;
        assert.ok(failed, `${JSON.stringify(content)}: ${JSON.stringify(r.body)}`);
        assert.match(JSON.stringify(r.body), /validation_error/);
        assert.equal(await t.services.store.getBank('default', bank), null, JSON.stringify(content));
      }
      // unstorable text in any field, not only content
      for (const item of [
        { content: 'fine', context: '\u0000' },
        { content: 'fine', tags: ['a\u0000'] },
        { content: 'fine', metadata: { k: 'v\u0000' } },
        { content: 'fine', metadata: { 'k\u0000': 'v' } },
        { content: 'fine', entities: [{ text: '\ud800' }] },
      ]) {
        const bank = fresh();
        const r = await mcp({ bank, items: [item] });
        assert.ok(r.status === 400 || r.body?.result?.isError === true, JSON.stringify(item));
        assert.equal(await t.services.store.getBank('default', bank), null, JSON.stringify(item));
      }
      assert.equal(await bankCount(), before);
    });

    test('HTTP Retain (sync and async) of blank content is a 400 naming the field, and no bank', async () => {
      for (const content of ['   ', '\t\n', '\u0000']) {
        for (const async of [false, true]) {
          const bank = fresh();
          const r = await t.call('POST', bankPath(bank, '/memories'), {
            body: { items: [{ content }], async },
          });
          assert.equal(r.status, 400, JSON.stringify(content));
          assert.equal(r.body.error.code, 'validation_error');
          assert.equal(await t.services.store.getBank('default', bank), null);
        }
      }
      const r = await t.call('POST', bankPath(fresh(), '/memories'), {
        body: { items: [{ content: 'ok' }, { content: ' ' }] },
      });
      assert.equal(r.body.error.details[0].path, 'items.1.content');
    });

    test('the core function refuses before creating the bank (queued operations, stdio)', async () => {
      for (const content of REFUSED) {
        const bank = fresh();
        await assert.rejects(
          retain(t.services, 'default', bank, { items: [{ content }] }),
          (e: unknown) => e instanceof AppError && e.code === 'validation_error',
        );
        assert.equal(await t.services.store.getBank('default', bank), null);
      }
    });

    test('a bank upsert with an invalid config is refused before the bank exists', async () => {
      for (const body of [{ retain_extraction_mode: 'bogus' }, { retain_chunk_size: -5 }]) {
        const bank = fresh();
        const r = await t.call('PUT', bankPath(bank), { body });
        assert.equal(r.status, 400, JSON.stringify(body));
        assert.equal(await t.services.store.getBank('default', bank), null, JSON.stringify(body));
      }
      // and a valid one still creates it
      const bank = fresh();
      assert.equal((await t.call('PUT', bankPath(bank), { body: { name: 'Alice' } })).status, 200);
      assert.ok(await t.services.store.getBank('default', bank));
    });

    test('text with real words around white space is still stored', async () => {
      const bank = fresh();
      const r = await mcp({ bank, items: [{ content: '  Alice likes tea.  ' }] });
      assert.equal(r.body.result.isError, undefined, JSON.stringify(r.body));
      assert.ok(await t.services.store.getBank('default', bank));
    });
  });
}
