/**
 * The composition root builds what the API tests run on: the same layers as `mnemo serve`
 * (encryption over the store, metered embedder, limit defaults), frozen once built.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createApp } from '../../src/api/app.js';
import { createLogger } from '../../src/api/logger.js';
import { isSealed } from '../../src/core/crypto/codec.js';
import { storeOver } from '../../src/store/open.js';
import { bankPath, testApp } from '../helpers/app.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import { metricSample } from '../helpers/prometheus.js';
import { newMasterKey } from '../security/encryption-helpers.js';

const CANARY = 'Quentin hid the zeppelin blueprints inside the harpsichord';

for (const engine of ENGINES) {
  describe(`the composition root under testApp (${engine})`, () => {
    test('an encrypted bank made through testApp stores sealed text and vectors; the API reads plaintext', async () => {
      const { db, dispose } = await openTestDb(engine);
      const t = await testApp(engine, {
        store: Object.assign(storeOver(db), { dispose }),
        masterKey: newMasterKey(),
      });
      try {
        for (const bank of ['vault', 'plain']) {
          assert.equal((await t.call('PUT', bankPath(bank), { body: {} })).status, 200);
        }
        const on = await t.call('PATCH', bankPath('vault', '/config'), {
          body: { updates: { encryption: 'managed' } },
        });
        assert.equal(on.status, 200, JSON.stringify(on.body));
        for (const bank of ['vault', 'plain']) {
          const r = await t.call('POST', bankPath(bank, '/memories'), {
            body: { items: [{ content: CANARY }] },
          });
          assert.equal(r.status, 200, JSON.stringify(r.body));
        }

        const rows = await db.query<{
          bank_id: string;
          text: string;
          plain_vector: boolean;
          embedding_sealed: string | null;
        }>(
          `SELECT bank_id, text, embedding IS NOT NULL AS plain_vector, embedding_sealed
           FROM memories ORDER BY bank_id`,
        );
        const [plain, vault] = rows;
        assert.equal(plain?.bank_id, 'plain');
        assert.equal(plain.text, CANARY, 'the control: a plain bank stores its text as is');
        assert.equal(plain.plain_vector, true);
        assert.equal(plain.embedding_sealed, null);
        assert.equal(vault?.bank_id, 'vault');
        assert.ok(isSealed(vault.text), `stored text ${vault.text.slice(0, 40)}`);
        assert.ok(!vault.text.includes('zeppelin'));
        assert.equal(vault.plain_vector, false, 'no plain vector of an encrypted bank');
        assert.ok(vault.embedding_sealed && isSealed(vault.embedding_sealed), 'the vector is sealed');

        const recalled = await t.call('POST', bankPath('vault', '/memories/recall'), {
          body: { query: 'zeppelin blueprints' },
        });
        assert.equal(recalled.status, 200, JSON.stringify(recalled.body));
        assert.equal(recalled.body.results[0]?.text, CANARY);
        assert.ok(recalled.body.results[0].scores.semantic > 0, 'the sealed vector opens for search');
      } finally {
        await t.close();
      }
    });

    test('the services are frozen, fully layered, and building an app changes nothing', async () => {
      const t = await testApp(engine, { defaultRequestsPerMinute: 7 });
      try {
        const s = t.services;
        assert.ok(Object.isFrozen(s));
        assert.throws(() => {
          (s as { llm: unknown }).llm = null;
        }, TypeError);
        assert.throws(() => {
          (s as { store: unknown }).store = t.raw;
        }, TypeError);
        assert.notEqual(s.store, t.raw, 'the encryption layer sits over the store');
        assert.equal(s.limitDefaults?.requestsPerMinute, 7, 'limit defaults from the configuration');
        assert.ok(s.recallCache, 'the Recall cache of the configuration');

        const before = { ...s };
        createApp(t.runtime, createLogger('silent'));
        assert.deepEqual(Object.keys(s), Object.keys(before));
        for (const [k, v] of Object.entries(before)) {
          assert.equal(s[k as keyof typeof s], v, `${k} is the same object`);
        }

        // The embedder is metered once, into this runtime's registry.
        const r = await t.call('POST', bankPath('m', '/memories'), {
          body: { items: [{ content: CANARY }] },
        });
        assert.equal(r.status, 200);
        const metrics = (await t.call('GET', '/metrics')).body as string;
        assert.equal(
          metricSample(metrics, 'mnemo_embed_duration_seconds_count', {
            embedder: s.embedder.id,
            outcome: 'ok',
          }),
          1,
        );
      } finally {
        await t.close();
      }
    });
  });
}
