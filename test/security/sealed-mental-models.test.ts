/**
 * An encrypted bank's mental models hold its text (name, source query, content, the Reflect
 * answer with the memories it cites, and each past content): the database keeps none of it in
 * clear, authorised reads get it back, and switching encryption off and on converts the models
 * and their history.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { ENGINES } from '../helpers/engines.js';
import { until } from '../helpers/until.js';
import { encryptedAppForSuite } from './encryption-helpers.js';

const canary = (tag: string) => `zq${tag}${randomBytes(5).toString('hex')}`;

for (const engine of ENGINES) {
  describe(`sealed mental models (${engine})`, () => {
    const e = encryptedAppForSuite(engine, { worker: true });
    const word = canary('memory');
    const name = canary('name');
    const query = canary('query');

    /** Every mental-model and history row of the bank as the database holds it, as text. */
    const rawRows = async (bank: string) =>
      (
        await e.db.query<{ row: string | null }>(
          `SELECT string_agg(r, $2) AS row FROM (
             SELECT to_jsonb(m)::text AS r FROM mental_models m WHERE bank_id = $1
             UNION ALL SELECT to_jsonb(h)::text FROM mental_model_history h WHERE bank_id = $1) x`,
          [bank, ' '],
        )
      )[0]!.row ?? '';
    const converted = () =>
      until(
        () => e.services.store.bankEncryption('default', 'vault'),
        (st) => st?.key?.converting === false,
        60_000,
      );
    const refreshed = async (bank: string, operationId: string) => {
      const op = await until(
        async () => (await e.call('GET', `/v1/default/banks/${bank}/operations/${operationId}`)).body,
        (o) => o.status === 'completed' || o.status === 'failed',
      );
      assert.equal(op.status, 'completed', JSON.stringify(op));
    };

    test('name, query, content, answer and history are sealed; reads open them', async () => {
      for (const bank of ['open', 'vault']) {
        if (bank === 'vault') {
          assert.equal((await e.call('PUT', `/v1/default/banks/${bank}`, {})).status, 200);
          const r = await e.call('PATCH', `/v1/default/banks/${bank}/config`, {
            updates: { encryption: 'managed' },
          });
          assert.equal(r.status, 200, JSON.stringify(r.body));
        }
        await e.call('POST', `/v1/default/banks/${bank}/memories`, {
          items: [{ content: `The ${word} lives in the garden shed.` }],
        });
        const made = await e.call('POST', `/v1/default/banks/${bank}/mental-models`, {
          id: 'shed',
          name: `Shed ${name}`,
          source_query: `Where does the ${word} live? ${query}`,
        });
        assert.equal(made.status, 200, JSON.stringify(made.body));
        await refreshed(bank, made.body.operation_id);
        // A second refresh puts the first content into the history.
        const again = await e.call('POST', `/v1/default/banks/${bank}/mental-models/shed/refresh`);
        await refreshed(bank, again.body.operation_id);
        const m = (await e.call('GET', `/v1/default/banks/${bank}/mental-models/shed`)).body;
        assert.match(m.content, new RegExp(word));
        assert.equal(m.name, `Shed ${name}`);
        const history = (await e.call('GET', `/v1/default/banks/${bank}/mental-models/shed/history`)).body;
        assert.equal(history.length, 2);
        assert.match(history[0].previous_content, new RegExp(word));
      }
      const open = await rawRows('open');
      for (const c of [word, name, query]) assert.ok(open.includes(c), `control: the plain bank holds ${c}`);
      const vault = await rawRows('vault');
      assert.ok(vault.length > 0);
      for (const c of [word, name, query]) assert.ok(!vault.includes(c), `${c} stored in clear`);
    });

    test('switching encryption off and on converts the models and their history', async () => {
      let r = await e.call('PATCH', '/v1/default/banks/vault/config', { updates: { encryption: 'none' } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      await converted();
      assert.ok((await rawRows('vault')).includes(word), 'plain again');
      r = await e.call('PATCH', '/v1/default/banks/vault/config', { updates: { encryption: 'managed' } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      await converted();
      const vault = await rawRows('vault');
      for (const c of [word, name, query]) assert.ok(!vault.includes(c), `${c} in clear after the switch`);
      const m = (await e.call('GET', '/v1/default/banks/vault/mental-models/shed')).body;
      assert.match(m.content, new RegExp(word));
      assert.equal(m.name, `Shed ${name}`);
    });

    test('deleting the bank removes its models and their history', async () => {
      assert.equal((await e.call('DELETE', '/v1/default/banks/vault')).status, 200);
      assert.equal(await rawRows('vault'), '');
    });
  });
}
