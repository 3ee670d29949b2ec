/**
 * An invalidated memory's keyword postings wait beside its row, out of the index: switching the
 * bank's encryption converts them with the row (never a plain word left in an encrypted bank, nor
 * a hashed one in a plain bank), and a restore puts back postings in the bank's current form.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runAllSlices } from '../../src/core/operations.js';
import { runReencryptOperation } from '../../src/core/crypto/reencrypt.js';
import type { Db } from '../../src/store/db.js';
import { storeOver } from '../../src/store/open.js';
import { keywordTerms } from '../../src/text/terms.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import { integrityProblems } from '../stress/integrity.js';
import { type EncryptedApp, encryptedApp, newMasterKey } from './encryption-helpers.js';

const BANK = 'retired';
const path = (rest = '') => `/v1/default/banks/${BANK}${rest}`;

for (const engine of ENGINES) {
  describe(`an invalidated memory's postings across encryption switches (${engine})`, () => {
    let e: EncryptedApp;
    let db: Db;
    let dispose: () => Promise<void>;
    let kiwi = '';

    const convert = () =>
      runAllSlices(e.services, runReencryptOperation, {
        id: 'manual',
        projectId: 'default',
        bankId: BANK,
        kind: 'reencrypt',
        payload: {},
        signal: new AbortController().signal,
      });
    const retired = async () =>
      (
        await db.query<{ terms: Record<string, number> | null }>(
          'SELECT retired_terms AS terms FROM memories WHERE bank_id = $1 AND id = $2',
          [BANK, kiwi],
        )
      )[0]?.terms ?? null;
    const found = async (words: string) =>
      (await e.services.store.keywordSearch('default', BANK, keywordTerms(words), {}, 10)).map((h) => h.id);
    const switchTo = async (encryption: string) => {
      const r = await e.call('PATCH', path('/config'), { updates: { encryption } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      await convert();
    };

    before(async () => {
      const opened = await openTestDb(engine);
      db = opened.db;
      dispose = opened.dispose;
      e = await encryptedApp(storeOver(db), newMasterKey(), { worker: false });
      const r = await e.call('POST', path('/memories'), {
        items: [
          { content: 'Marta grows kiwis in her garden.' },
          { content: 'Paul buys kiwis at the market.' },
        ],
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      kiwi = r.body.memory_ids[0];
    });
    after(async () => {
      await e.close();
      await dispose();
    });

    test('converted with the row, restored in the bank’s current form', async () => {
      const inv = await e.call('PATCH', path(`/memories/${kiwi}`), { state: 'invalidated' });
      assert.equal(inv.status, 200, JSON.stringify(inv.body));
      assert.ok(Object.keys((await retired()) ?? {}).includes('garden'));
      assert.deepEqual(await found('garden'), []);

      await switchTo('managed');
      const sealed = Object.keys((await retired()) ?? {});
      assert.ok(sealed.length >= 4, 'still kept');
      assert.ok(!sealed.some((t) => ['garden', 'marta', 'kiwis', 'grow'].includes(t)), sealed.join(' '));
      assert.deepEqual(await integrityProblems(db), []);
      // No plain word is left in the vocabulary either (a converted term's old form goes).
      for (const word of ['garden', 'market', 'marta', 'paul'])
        assert.deepEqual(
          await db.query('SELECT term, df FROM bank_terms WHERE bank_id = $1 AND term = $2', [BANK, word]),
          [],
          word,
        );
      // Listing by a word still finds it (its kept terms, hashed like the index's).
      const listed = await e.call('GET', path('/memories?q=garden'));
      assert.deepEqual(
        listed.body.items.map((m: { id: string }) => m.id),
        [kiwi],
      );
      assert.equal((await e.call('PATCH', path(`/memories/${kiwi}`), { state: 'valid' })).status, 200);
      assert.equal(await retired(), null);
      assert.deepEqual(await found('garden'), [kiwi]);
      assert.deepEqual(await integrityProblems(db), []);

      assert.equal((await e.call('PATCH', path(`/memories/${kiwi}`), { state: 'invalidated' })).status, 200);
      await switchTo('none');
      assert.ok(Object.keys((await retired()) ?? {}).includes('garden'), 'plain again');
      assert.deepEqual(await integrityProblems(db), []);
      assert.equal((await e.call('PATCH', path(`/memories/${kiwi}`), { state: 'valid' })).status, 200);
      assert.deepEqual(await found('garden'), [kiwi]);
      assert.deepEqual((await found('kiwis')).sort(), [kiwi, ...(await found('market'))].sort());
      assert.deepEqual(await integrityProblems(db), []);
    });
  });
}
