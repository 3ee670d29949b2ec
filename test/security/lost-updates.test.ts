/**
 * Lost updates, written as the attack: many clients PATCH one bank's config at once, each
 * setting its own key (one of them `encryption: managed`). Every write must survive — a
 * read-modify-write of the whole config row would silently drop most of them, and could switch
 * encryption back off. Run on each engine, and across two app instances (two connection pools)
 * on one PostgreSQL, where the writers truly run in parallel.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, ENGINES, openTestStore, type TestDatabase } from '../helpers/engines.js';
import { type EncryptedApp, encryptedApp, newMasterKey } from './encryption-helpers.js';

const WRITERS = 50;

/** One value per config key other than `encryption`: writer i sets KEYS[i % KEYS.length]. */
const KEYS: [string, unknown][] = [
  ['retain_extraction_mode', 'verbose'],
  ['retain_auto_entities', true],
  ['retain_custom_instructions', 'custom instructions'],
  ['retain_mission', 'retain mission'],
  ['retain_chunk_size', 1234],
  ['reflect_mission', 'reflect mission'],
  ['enable_observations', false],
  ['observations_mission', 'observations mission'],
  ['enable_temporal_retrieval', false],
  ['enable_graph_retrieval', false],
  ['enable_reranking', false],
  ['disposition_skepticism', 5],
  ['disposition_literalism', 1],
  ['disposition_empathy', 4],
  ['recall_default_budget', 'high'],
];

/** Writer 0 switches encryption on; the others set one key each, cycling through KEYS. */
const updateOf = (i: number): Record<string, unknown> => {
  if (i === 0) return { encryption: 'managed' };
  const [k, v] = KEYS[(i - 1) % KEYS.length]!;
  return { [k]: v };
};
const EXPECTED = Object.fromEntries([['encryption', 'managed'], ...KEYS]);

/** Sends the 50 PATCHes at once, spread over `apps`; every one must succeed. */
async function patchAll(apps: EncryptedApp[], bank: string) {
  const replies = await Promise.all(
    Array.from({ length: WRITERS }, (_, i) =>
      apps[i % apps.length]!.call('PATCH', `/v1/default/banks/${bank}/config`, { updates: updateOf(i) }),
    ),
  );
  for (const [i, r] of replies.entries())
    assert.equal(r.status, 200, `writer ${i}: ${JSON.stringify(r.body)}`);
}

/** The bank's stored overrides, its key and its queued re-encryptions, read from the database. */
async function stored(raw: Store, bank: string) {
  const b = await raw.getBank('default', bank);
  const enc = await raw.bankEncryption('default', bank);
  const ops = await raw.listOperations('default', bank, {}, { limit: 100 });
  return {
    overrides: b!.config,
    key: enc!.key,
    reencrypts: ops.items.filter((o) => o.kind === 'reencrypt').length,
  };
}

for (const engine of ENGINES) {
  describe(`no lost config update under ${WRITERS} concurrent writers (${engine})`, () => {
    let store: Store & { dispose(): Promise<void> };
    let e: EncryptedApp;

    before(async () => {
      store = await openTestStore(engine);
      e = encryptedApp(store, newMasterKey(), { worker: false });
    });
    after(async () => {
      await e.close();
      await store.dispose();
    });

    test('every key written by a concurrent PATCH is in the stored config', async () => {
      assert.equal((await e.call('PUT', '/v1/default/banks/race', {})).status, 200);
      await patchAll([e], 'race');
      const s = await stored(store, 'race');
      assert.deepEqual(s.overrides, EXPECTED);
      assert.ok(s.key, 'the switch to managed encryption created the bank key');
      assert.ok(s.reencrypts >= 1, 'the switch queued a re-encryption');
      const view = await e.call('GET', '/v1/default/banks/race/config');
      assert.deepEqual(view.body.overrides, EXPECTED);
      assert.equal(view.body.config.encryption, 'managed');
    });
  });
}

describe(`no lost config update across two app instances on one PostgreSQL`, {
  skip: !process.env.MNEMO_TEST_DATABASE_URL,
}, () => {
  let db: TestDatabase;
  let stores: Store[] = [];
  let apps: EncryptedApp[] = [];

  before(async () => {
    db = await createTestDatabase();
    const key = newMasterKey();
    // Two stores, two pools: the two instances' statements run in parallel in the database.
    stores = [
      await openStore({ databaseUrl: db.url, poolSize: 8 }),
      await openStore({ databaseUrl: db.url, poolSize: 8 }),
    ];
    apps = stores.map((s) => encryptedApp(s, key, { worker: false }));
  });
  after(async () => {
    await Promise.all(apps.map((a) => a.close()));
    await Promise.all(stores.map((s) => s.close()));
    await db?.drop();
  });

  test('writers spread over both instances lose nothing', async () => {
    for (const round of [1, 2, 3]) {
      const bank = `race-${round}`;
      assert.equal((await apps[0]!.call('PUT', `/v1/default/banks/${bank}`, {})).status, 200);
      await patchAll(apps, bank);
      const s = await stored(stores[1]!, bank);
      assert.deepEqual(s.overrides, EXPECTED, `round ${round}`);
      assert.ok(s.key, `round ${round}: the bank key exists`);
      assert.ok(s.reencrypts >= 1, `round ${round}: a re-encryption is queued`);
    }
  });
});
