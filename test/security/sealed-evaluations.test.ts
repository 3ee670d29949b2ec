/**
 * An encrypted bank's evaluation runs hold its text (the queries, the tags): the database keeps
 * their cases only sealed, authorised reads and reruns get them back, the figures match a plain
 * bank's, and switching encryption off and on converts the kept runs.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { ENGINES } from '../helpers/engines.js';
import { until } from '../helpers/until.js';
import { encryptedAppForSuite } from './encryption-helpers.js';

const canary = (tag: string) => `zq${tag}${randomBytes(5).toString('hex')}`;

for (const engine of ENGINES) {
  describe(`sealed evaluation runs (${engine})`, () => {
    const e = encryptedAppForSuite(engine, { worker: true });
    const word = canary('query');
    const tag = canary('tag');
    const runs: Record<string, string> = {};

    /** Every evaluation row of the bank as the database holds it, as text. */
    const rawRuns = async (bank: string) =>
      (
        await e.db.query<{ row: string | null }>(
          'SELECT string_agg(to_jsonb(v)::text, $2) AS row FROM evaluations v WHERE bank_id = $1',
          [bank, ' '],
        )
      )[0]!.row ?? '';
    const converted = () =>
      until(
        () => e.services.store.bankEncryption('default', 'vault'),
        (st) => st?.key?.converting === false,
        60_000,
      );

    test('the cases are sealed; reads and reruns open them; the figures are a plain bank’s', async () => {
      for (const bank of ['open', 'vault']) {
        if (bank === 'vault') {
          assert.equal((await e.call('PUT', `/v1/default/banks/${bank}`, {})).status, 200);
          const r = await e.call('PATCH', `/v1/default/banks/${bank}/config`, {
            updates: { encryption: 'managed' },
          });
          assert.equal(r.status, 200, JSON.stringify(r.body));
        }
        await e.call('POST', `/v1/default/banks/${bank}/memories`, {
          items: [
            { content: `The ${word} lives in the garden shed.`, tags: [tag] },
            { content: 'The bicycle is in the garage.', tags: [tag] },
          ],
        });
        const ids = (await e.call('GET', `/v1/default/banks/${bank}/memories`)).body.items.map(
          (m: any) => m.id,
        );
        const memory = (await e.call('GET', `/v1/default/banks/${bank}/memories`)).body.items.find((m: any) =>
          m.text.includes(word),
        ).id;
        assert.equal(ids.length, 2);
        const run = await e.call('POST', `/v1/default/banks/${bank}/evaluations`, {
          k: 1,
          cases: [{ query: `Where is the ${word}?`, expected_memory_ids: [memory], tags: [tag] }],
        });
        assert.equal(run.status, 201, JSON.stringify(run.body));
        assert.equal(run.body.cases[0].query, `Where is the ${word}?`);
        assert.equal(run.body.recall_at_k, 1);
        runs[bank] = run.body.id;
      }
      const open = await rawRuns('open');
      assert.ok(open.includes(word) && open.includes(tag), 'control: the plain bank holds the query and tag');
      const vault = await rawRuns('vault');
      assert.ok(vault.length > 0);
      assert.ok(!vault.includes(word), 'query stored in clear');
      assert.ok(!vault.includes(tag), 'tag stored in clear');

      const got = await e.call('GET', `/v1/default/banks/vault/evaluations/${runs.vault}`);
      assert.equal(got.status, 200);
      assert.equal(got.body.cases[0].query, `Where is the ${word}?`);
      assert.deepEqual(got.body.cases[0].tags, [tag]);
      const again = await e.call('POST', '/v1/default/banks/vault/evaluations', { from: runs.vault });
      assert.equal(again.status, 201, JSON.stringify(again.body));
      assert.equal(again.body.recall_at_k, 1);
      assert.equal(again.body.cases[0].query, `Where is the ${word}?`);
    });

    test('switching encryption off and on converts the kept runs', async () => {
      let r = await e.call('PATCH', '/v1/default/banks/vault/config', { updates: { encryption: 'none' } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      await converted();
      assert.ok((await rawRuns('vault')).includes(word), 'plain again');
      let got = await e.call('GET', `/v1/default/banks/vault/evaluations/${runs.vault}`);
      assert.equal(got.body.cases[0].query, `Where is the ${word}?`);
      r = await e.call('PATCH', '/v1/default/banks/vault/config', { updates: { encryption: 'managed' } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      await converted();
      assert.ok(!(await rawRuns('vault')).includes(word), 'sealed again');
      got = await e.call('GET', `/v1/default/banks/vault/evaluations/${runs.vault}`);
      assert.equal(got.body.cases[0].query, `Where is the ${word}?`);
    });
  });
}
