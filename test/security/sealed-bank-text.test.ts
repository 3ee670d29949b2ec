/**
 * An encrypted bank's own free text (name, mission, missions and custom instructions of its
 * config) is sealed like its memories, and its documents' content hashes too (a bare hash
 * confirms a guess at a document's content); authorised reads get them back, re-retaining an
 * unchanged document is still recognised, and switching encryption off and on converts them.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { ENGINES } from '../helpers/engines.js';
import { until } from '../helpers/until.js';
import { encryptedAppForSuite } from './encryption-helpers.js';

const canary = (tag: string) => `zq${tag}${randomBytes(5).toString('hex')}`;

for (const engine of ENGINES) {
  describe(`sealed bank text and document hashes (${engine})`, () => {
    const e = encryptedAppForSuite(engine, { worker: true });
    const c = {
      name: canary('name'),
      mission: canary('mission'),
      retainMission: canary('rmission'),
      reflectMission: canary('fmission'),
      observationsMission: canary('omission'),
      instructions: canary('instr'),
    };
    const doc = `The recipe for ${canary('doc')} needs three eggs`;

    /** Everything the database holds about the bank, as text. */
    const rawBank = async (bank: string) =>
      (
        await e.db.query<{ row: string }>(
          `SELECT (SELECT to_jsonb(b)::text FROM banks b WHERE b.id = $1)
             || coalesce((SELECT string_agg(to_jsonb(d)::text, ' ') FROM documents d WHERE d.bank_id = $1), '') AS row`,
          [bank],
        )
      )[0]!.row;
    const docHash = async (bank: string) =>
      (
        await e.db.query<{ h: string }>('SELECT content_hash AS h FROM documents WHERE bank_id = $1', [bank])
      )[0]!.h;
    const settings = {
      retain_mission: c.retainMission,
      reflect_mission: c.reflectMission,
      observations_mission: c.observationsMission,
      retain_custom_instructions: c.instructions,
    };
    const converted = () =>
      until(
        () => e.services.store.bankEncryption('default', 'vault'),
        (st) => st?.key?.converting === false,
        60_000,
      );

    async function checkReads(bank: string) {
      const profile = await e.call('GET', `/v1/default/banks/${bank}`);
      assert.equal(profile.body.name, c.name, JSON.stringify(profile.body));
      assert.equal(profile.body.mission, c.mission);
      const config = await e.call('GET', `/v1/default/banks/${bank}/config`);
      for (const [k, v] of Object.entries(settings)) assert.equal(config.body.config[k], v, k);
      const list = await e.call('GET', '/v1/default/banks');
      const listed = list.body.items?.find((b: any) => (b.id ?? b.bank_id) === bank);
      if (listed && 'name' in listed) assert.equal(listed.name, c.name);
      const d = await e.call('GET', `/v1/default/banks/${bank}/documents/recipe`);
      assert.equal(d.status, 200, JSON.stringify(d.body));
      return d.body.content_hash as string;
    }

    test('name, mission, config text and document hashes are sealed; reads and dedup work', async () => {
      for (const bank of ['open', 'vault']) {
        assert.equal((await e.call('PUT', `/v1/default/banks/${bank}`, {})).status, 200);
        if (bank === 'vault') {
          const r = await e.call('PATCH', `/v1/default/banks/${bank}/config`, {
            updates: { encryption: 'managed' },
          });
          assert.equal(r.status, 200, JSON.stringify(r.body));
        }
        const id = await e.call('PATCH', `/v1/default/banks/${bank}`, { name: c.name, mission: c.mission });
        assert.equal(id.status, 200, JSON.stringify(id.body));
        const cfg = await e.call('PATCH', `/v1/default/banks/${bank}/config`, { updates: settings });
        assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
        const r = await e.call('POST', `/v1/default/banks/${bank}/memories`, {
          items: [{ content: doc, document_id: 'recipe' }],
        });
        assert.equal(r.status, 200, JSON.stringify(r.body));
      }
      const plainHash = await checkReads('open');
      const sealedHash = await checkReads('vault');
      assert.equal(sealedHash, plainHash, 'readers see the same content hash');

      // The plain bank shows its text (the search can see plaintext); the encrypted one none of it.
      const open = await rawBank('open');
      for (const v of Object.values(c)) assert.ok(open.includes(v), `control: ${v} in the plain bank`);
      const vault = await rawBank('vault');
      for (const [k, v] of Object.entries(c)) assert.ok(!vault.includes(v), `${k} stored in clear`);
      // The stored document hash confirms no guess: it is not the hash anyone can compute.
      const stored = await docHash('vault');
      assert.ok(stored.startsWith('\u0001e1:'), JSON.stringify(stored));
      assert.ok(!vault.includes(plainHash));
      assert.ok(!vault.includes(createHash('sha256').update(doc).digest('hex').slice(0, 32)));

      // Dedup still works: the same document again leaves its memories as they are.
      const ids = async () =>
        (await e.call('GET', '/v1/default/banks/vault/memories?document_id=recipe')).body.items.map(
          (m: any) => m.id,
        );
      const first = await ids();
      assert.equal(first.length, 1);
      await e.call('POST', '/v1/default/banks/vault/memories', {
        items: [{ content: doc, document_id: 'recipe' }],
      });
      assert.deepEqual(await ids(), first, 'an unchanged document is not retained again');
      await e.call('POST', '/v1/default/banks/vault/memories', {
        items: [{ content: `${doc}, and flour`, document_id: 'recipe' }],
      });
      assert.notDeepEqual(await ids(), first, 'a changed document is');
      await e.call('POST', '/v1/default/banks/vault/memories', {
        items: [{ content: doc, document_id: 'recipe' }],
      });
    });

    test('switching encryption off and on converts the bank text and document hashes', async () => {
      let r = await e.call('PATCH', '/v1/default/banks/vault/config', { updates: { encryption: 'none' } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      await converted();
      const plain = await rawBank('vault');
      for (const [k, v] of Object.entries(c)) assert.ok(plain.includes(v), `${k} plain again`);
      assert.ok(!(await docHash('vault')).startsWith('\u0001'));
      await checkReads('vault');
      r = await e.call('PATCH', '/v1/default/banks/vault/config', { updates: { encryption: 'managed' } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      await converted();
      const sealed = await rawBank('vault');
      for (const [k, v] of Object.entries(c)) assert.ok(!sealed.includes(v), `${k} sealed again`);
      assert.ok((await docHash('vault')).startsWith('\u0001e1:'));
      await checkReads('vault');
    });
  });
}
