/**
 * Ids that differ only in Unicode normalisation are one id: `Café` precomposed (U+00E9) and
 * decomposed (e + U+0301) reach the same bank and document, over HTTP and MCP.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { nfcRequest } from '../../src/api/nfc.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

const NFC = 'caf\u00e9:zo\u00eb@example.com';
const NFD = NFC.normalize('NFD');
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

test('the ids differ as strings: this is the attack', () => {
  assert.notEqual(NFC, NFD);
  assert.equal(NFD.normalize('NFC'), NFC);
});

test('nfcRequest leaves NFC requests untouched and keeps escaped slashes', () => {
  const same = new Request('http://localhost/v1/default/banks/a%2Fb/memories?x=1');
  assert.equal(nfcRequest(same), same);
  const r = nfcRequest(
    new Request(
      `http://localhost/v1/default/banks/${encodeURIComponent(`a/${NFD}`)}/x?bank=${encodeURIComponent(NFD)}`,
    ),
  );
  const url = new URL(r.url);
  assert.equal(decodeURIComponent(url.pathname.split('/')[4]!), `a/${NFC}`);
  assert.equal(url.searchParams.get('bank'), NFC);
});

for (const engine of ENGINES) {
  describe(`bank and document ids in NFC (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine);
    });
    after(() => t.close());

    test('a Retain under the decomposed id lands in the precomposed bank, and both spellings read it', async () => {
      const a = await t.call('POST', bankPath(NFD, '/memories'), {
        body: { items: [{ content: 'Zoë drinks flat whites.', document_id: `doc-${NFD}` }] },
      });
      assert.equal(a.status, 200, JSON.stringify(a.body));
      assert.equal(a.body.bank_id, NFC);
      const b = await t.call('POST', bankPath(NFC, '/memories'), {
        body: { items: [{ content: 'Zoë walks to work.' }] },
      });
      assert.equal(b.status, 200);
      const banks = (await t.services.store.listBanks('default', {})).map((x) => x.id);
      assert.deepEqual(
        banks.filter((id) => id.normalize('NFC') === NFC),
        [NFC],
        'one bank, not two',
      );
      for (const id of [NFC, NFD]) {
        const list = await t.call('GET', bankPath(id, '/memories'));
        assert.equal(list.status, 200);
        assert.equal(list.body.items.length, 2, id === NFC ? 'NFC' : 'NFD');
      }
      // the document too: replacing it under the other spelling replaces, not duplicates
      const again = await t.call('POST', bankPath(NFC, '/memories'), {
        body: { items: [{ content: 'Zoë drinks tea now.', document_id: `doc-${NFC}` }] },
      });
      assert.equal(again.status, 200);
      const after = await t.call('GET', bankPath(NFD, '/memories'));
      assert.equal(after.body.items.length, 2);
      assert.ok(after.body.items.some((m: { text: string }) => m.text.includes('tea')));
    });

    test('MCP: the bank argument and ?bank= are normalised the same way', async () => {
      const call = (bank: string | null, args: Record<string, unknown>, query = '') =>
        t.call('POST', `/mcp${query}`, {
          headers: MCP_HEADERS,
          body: {
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'retain', arguments: bank ? { bank, ...args } : args },
          },
        });
      const bank2 = `mcp-${NFD}`;
      const r1 = await call(bank2, { items: [{ content: 'first' }] });
      assert.equal(r1.body.result.structuredContent.bank_id, bank2.normalize('NFC'));
      const r2 = await call(null, { items: [{ content: 'second' }] }, `?bank=${encodeURIComponent(bank2)}`);
      assert.equal(r2.body.result.structuredContent.bank_id, bank2.normalize('NFC'));
      assert.equal(await t.services.store.getBank('default', bank2), null, 'no bank under the decomposed id');
      const stored = await t.services.store.getBank('default', bank2.normalize('NFC'));
      assert.ok(stored);
    });
  });
}
