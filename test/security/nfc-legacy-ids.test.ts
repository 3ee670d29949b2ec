/**
 * Bank and document ids made before ids were put in NFC at the boundary (src/api/nfc.ts): a
 * bank created under a decomposed id could no longer be reached, since every request now names
 * the precomposed one. Migration 20 gives every such id its NFC form, or, when that name is
 * taken, a deterministic legacy name, and records each rename in the audit trail. The legacy
 * rows are made here as they were made then: through core, below the HTTP boundary, in
 * a plain bank and an encrypted one (whose data key is bound to the id it was made under).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { requireBank, updateConfig } from '../../src/core/banks.js';
import { retain } from '../../src/core/retain/retain.js';
import { migrate } from '../../src/store/migrate.js';
import { storeOver } from '../../src/store/open.js';
import type { Db } from '../../src/store/db.js';
import { bankPath } from '../helpers/app.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import { type EncryptedApp, encryptedApp, newMasterKey } from './encryption-helpers.js';

const nfd = (s: string) => s.normalize('NFD');
const nfc = (s: string) => s.normalize('NFC');
/** The name a non-NFC id gets when its NFC form is taken (docs/security.md). */
const legacy = (old: string) =>
  `${nfc(old)}~legacy-${createHash('md5').update(old).digest('hex').slice(0, 8)}`;

const ALONE = nfd('café-zoë'); // no NFC twin: becomes its NFC form
const TWIN = nfd('renée'); // an NFC twin exists: becomes a legacy name
const SEALED = nfd('crème-brûlée'); // encrypted, no twin
const DOC = nfd('journal-été'); // no twin in its bank
const NOTES = nfd('notes-ü'); // an NFC twin in the same bank

for (const engine of ENGINES) {
  describe(`legacy non-NFC ids stay reachable (${engine})`, () => {
    let db: Db;
    let dispose: () => Promise<void>;
    let app: EncryptedApp;
    const masterKey = newMasterKey();
    const texts = async (bank: string) => {
      const r = await app.call('GET', bankPath(bank, '/memories?limit=100'));
      assert.equal(r.status, 200, `${bank}: ${JSON.stringify(r.body)}`);
      return r.body.items.map((m: { text: string }) => m.text).sort();
    };

    before(async () => {
      ({ db, dispose } = await openTestDb(engine));
      const old = await encryptedApp(storeOver(db), masterKey, { worker: false });
      const s = old.services;
      const put = (bank: string, content: string, document_id?: string) =>
        retain(s, 'default', bank, { items: [{ content, ...(document_id && { document_id }) }] });
      await put(ALONE, 'Zoë drinks flat whites.', 'doc-a');
      await put(ALONE, 'Zoë walks to work.');
      await put(ALONE, 'Notes, precomposed.', nfc(NOTES));
      await put(ALONE, 'Notes, decomposed.', 'doc-b');
      // Core puts document ids in NFC too: the legacy document ids are written directly.
      for (const [now, then] of [
        ['doc-a', DOC],
        ['doc-b', NOTES],
      ]) {
        await db.query('UPDATE documents SET id = $3 WHERE project_id = $1 AND id = $2', [
          'default',
          now,
          then,
        ]);
        await db.query('UPDATE memories SET document_id = $3 WHERE project_id = $1 AND document_id = $2', [
          'default',
          now,
          then,
        ]);
      }
      await put(TWIN, 'Renée (decomposed) plays the cello.');
      await put(nfc(TWIN), 'Renée (precomposed) plays chess.');
      await put(SEALED, 'the first secret recipe');
      await updateConfig(
        s,
        await requireBank(s, 'default', SEALED),
        { encryption: 'managed' },
        {
          masterKeySet: true,
        },
      );
      await put(SEALED, 'the second secret recipe');
      await old.close();
      // Before migration 20 the decomposed banks answer 404 to every spelling of their id.
      app = await encryptedApp(storeOver(db), masterKey, { worker: false });
      assert.equal((await app.call('GET', bankPath(ALONE, '/memories'))).status, 404);
      assert.equal((await app.call('GET', bankPath(SEALED, '/memories'))).status, 404);
      await app.close();
      // The upgrade: migration 20 runs on the database that holds them.
      await db.query('DELETE FROM schema_migrations WHERE version = 20');
      await migrate(db);
      app = await encryptedApp(storeOver(db), masterKey, { worker: false });
    });
    after(async () => {
      await app.close();
      await dispose();
    });

    test('no stored bank or document id is outside NFC', async () => {
      const bad = await db.query(
        `SELECT 'bank' AS what, id FROM banks WHERE NOT (id IS NFC NORMALIZED)
         UNION ALL SELECT 'document', id FROM documents WHERE NOT (id IS NFC NORMALIZED)
         UNION ALL SELECT 'memory document', document_id FROM memories WHERE NOT (document_id IS NFC NORMALIZED)`,
      );
      assert.deepEqual(bad, []);
    });

    test('a bank without an NFC twin takes its NFC id, with its memories and documents', async () => {
      for (const spelling of [ALONE, nfc(ALONE)]) {
        assert.deepEqual(await texts(spelling), [
          'Notes, decomposed.',
          'Notes, precomposed.',
          'Zoë drinks flat whites.',
          'Zoë walks to work.',
        ]);
      }
      const doc = async (id: string) => {
        const r = await app.call('GET', bankPath(ALONE, `/documents/${encodeURIComponent(id)}`));
        assert.equal(r.status, 200, `${id}: ${JSON.stringify(r.body)}`);
        return r.body;
      };
      assert.equal((await doc(DOC)).id, nfc(DOC));
      // a document whose NFC id was taken in its bank: under its legacy name
      assert.equal((await doc(nfc(NOTES))).memory_count, 1);
      assert.equal((await doc(legacy(NOTES))).memory_count, 1);
      const listed = await app.call(
        'GET',
        bankPath(ALONE, `/memories?document_id=${encodeURIComponent(legacy(NOTES))}`),
      );
      assert.deepEqual(
        listed.body.items?.map((m: { text: string }) => m.text),
        ['Notes, decomposed.'],
        JSON.stringify(listed.body),
      );
    });

    test('with an NFC twin: the twin keeps its id, the other is reachable under its legacy name', async () => {
      assert.deepEqual(await texts(nfc(TWIN)), ['Renée (precomposed) plays chess.']);
      assert.deepEqual(await texts(legacy(TWIN)), ['Renée (decomposed) plays the cello.']);
      const banks = await app.call('GET', '/v1/default/banks');
      const ids = banks.body.items.map((b: { bank_id?: string; id?: string }) => b.bank_id ?? b.id);
      assert.ok(ids.includes(legacy(TWIN)), JSON.stringify(ids));
    });

    test('an encrypted bank is renamed and still decrypts (its data key was bound to the old id)', async () => {
      assert.deepEqual(await texts(SEALED), ['the first secret recipe', 'the second secret recipe']);
      const r = await app.call('POST', bankPath(SEALED, '/memories/recall'), { query: 'secret recipe' });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.results.length, 2);
      const raw = await db.query<{ text: string }>(
        'SELECT text FROM memories WHERE project_id = $1 AND bank_id = $2',
        ['default', nfc(SEALED)],
      );
      assert.ok(
        raw.some((m) => !m.text.includes('secret')),
        'the second memory is stored sealed',
      );
      // new memories go on being written and read under the new id
      const more = await app.call('POST', bankPath(SEALED, '/memories'), {
        items: [{ content: 'a third recipe' }],
      });
      assert.equal(more.status, 200, JSON.stringify(more.body));
      assert.equal((await texts(SEALED)).length, 3);
    });

    test('every rename is in the audit trail, old id included', async () => {
      const r = await app.call('GET', '/v1/default/audit?action=banks.id_normalized');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const renames = r.body.items.map((e: { bank_id: string; request_id: string }) => [
        e.request_id,
        e.bank_id,
      ]);
      assert.deepEqual(
        renames.sort(),
        [
          [`migration-20:${ALONE}`, nfc(ALONE)],
          [`migration-20:${SEALED}`, nfc(SEALED)],
          [`migration-20:${TWIN}`, legacy(TWIN)],
        ].sort(),
      );
      const docs = await app.call('GET', '/v1/default/audit?action=documents.id_normalized');
      assert.deepEqual(
        docs.body.items.map((e: { bank_id: string; request_id: string }) => [e.request_id, e.bank_id]).sort(),
        [
          [`migration-20:${DOC}`, nfc(ALONE)],
          [`migration-20:${NOTES}`, nfc(ALONE)],
        ].sort(),
      );
    });
  });
}
