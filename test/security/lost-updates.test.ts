/**
 * Lost updates, written as the attack: many clients PATCH one bank's config at once, each
 * setting its own key (one of them `encryption: managed`). Every write must survive — a
 * read-modify-write of the whole config row would silently drop most of them, and could switch
 * encryption back off. Run on each engine, and across two app instances (two connection pools)
 * on one PostgreSQL, where the writers truly run in parallel.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { isSealed } from '../../src/core/crypto/codec.js';
import { MAX_DIRECTIVES } from '../../src/core/directives.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { until } from '../helpers/until.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../helpers/engines.js';
import { encryptedAppForSuite, type EncryptedApp, encryptedApp, newMasterKey } from './encryption-helpers.js';

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
    const e = encryptedAppForSuite(engine);

    test('every key written by a concurrent PATCH is in the stored config', async () => {
      assert.equal((await e.call('PUT', '/v1/default/banks/race', {})).status, 200);
      await patchAll([e], 'race');
      const s = await stored(e.raw, 'race');
      // Every key is there; text settings written once the key existed are sealed at rest, so
      // their values are compared through the API below.
      assert.deepEqual(Object.keys(s.overrides).sort(), Object.keys(EXPECTED).sort());
      for (const [k, v] of Object.entries(EXPECTED))
        if (typeof v !== 'string') assert.deepEqual(s.overrides[k], v, k);
      assert.ok(s.key, 'the switch to managed encryption created the bank key');
      assert.ok(s.reencrypts >= 1, 'the switch queued a re-encryption');
      const view = await e.call('GET', '/v1/default/banks/race/config');
      assert.deepEqual(view.body.overrides, EXPECTED);
      assert.equal(view.body.config.encryption, 'managed');
    });
  });
}

for (const engine of ENGINES) {
  describe(`other read-modify-writes under concurrent writers (${engine})`, () => {
    const e = encryptedAppForSuite(engine);

    test('a bank attached to ten spaces at once ends in the one space that was told yes', async () => {
      const spaces = Array.from({ length: 10 }, (_, i) => `sp${i}`);
      for (const id of spaces)
        assert.equal((await e.call('POST', '/v1/default/spaces', { id, name: id })).status, 201);
      assert.equal((await e.call('PUT', '/v1/default/banks/mover', {})).status, 200);
      const replies = await Promise.all(
        spaces.map((sp) => e.call('PUT', `/v1/default/spaces/${sp}/banks/mover`)),
      );
      const won = spaces.filter((_, i) => replies[i]!.status === 200);
      assert.equal(won.length, 1, `attached: ${won.join(', ')}`);
      for (const r of replies) assert.ok(r.status === 200 || r.status === 409, JSON.stringify(r.body));
      assert.equal((await e.raw.getBank('default', 'mover'))!.space_id, won[0]);
      // Two detaches at once: one removes the bank, the other finds it gone (a stale read must
      // not let a late detach take the bank out of a space it was moved to meanwhile).
      const [a, b] = [won[0]!, spaces.find((x) => x !== won[0])!];
      const moves = await Promise.all([
        e.call('DELETE', `/v1/default/spaces/${a}/banks/mover`),
        e.call('DELETE', `/v1/default/spaces/${a}/banks/mover`),
      ]);
      assert.deepEqual(moves.map((r) => r.status).sort(), [200, 404]);
      assert.equal((await e.call('PUT', `/v1/default/spaces/${b}/banks/mover`)).status, 200);
      assert.equal((await e.call('DELETE', `/v1/default/spaces/${a}/banks/mover`)).status, 404);
      assert.equal((await e.raw.getBank('default', 'mover'))!.space_id, b);
    });

    test('a bank attached while its space is deleted is never left in a deleted space', async () => {
      for (let round = 0; round < 5; round++) {
        const sp = `gone${round}`;
        const bank = `orphan${round}`;
        assert.equal((await e.call('POST', '/v1/default/spaces', { id: sp, name: sp })).status, 201);
        assert.equal((await e.call('PUT', `/v1/default/banks/${bank}`, {})).status, 200);
        await Promise.all([
          e.call('PUT', `/v1/default/spaces/${sp}/banks/${bank}`),
          e.call('DELETE', `/v1/default/spaces/${sp}`),
        ]);
        assert.equal((await e.raw.getBank('default', bank))!.space_id, null, `round ${round}`);
        // the same for a bank a Retain creates in the space (`?space=`)
        assert.equal((await e.call('POST', '/v1/default/spaces', { id: sp, name: sp })).status, 201);
        const [made] = await Promise.all([
          e.call('POST', `/v1/default/banks/new${round}/memories?space=${sp}`, { items: [{ content: 'x' }] }),
          e.call('DELETE', `/v1/default/spaces/${sp}`),
        ]);
        assert.ok([200, 404].includes(made.status), JSON.stringify(made.body));
        assert.equal(
          (await e.raw.getBank('default', `new${round}`))?.space_id ?? null,
          null,
          `round ${round}`,
        );
      }
    });

    test('a write racing the deletion of its bank is a 409 or lands, never a 500', async () => {
      for (let round = 0; round < 5; round++) {
        const bank = `doomed${round}`;
        assert.equal((await e.call('PUT', `/v1/default/banks/${bank}`, {})).status, 200);
        const replies = await Promise.all([
          e.call('POST', `/v1/default/banks/${bank}/memories`, { items: [{ content: 'one fact' }] }),
          e.call('DELETE', `/v1/default/banks/${bank}`),
          e.call('POST', `/v1/default/banks/${bank}/directives`, { text: 'a rule' }),
          e.call('PATCH', `/v1/default/banks/${bank}/config`, { updates: { enable_reranking: false } }),
        ]);
        for (const r of replies) assert.ok(r.status < 500, `round ${round}: ${JSON.stringify(r.body)}`);
      }
    });

    test('concurrent consolidation requests queue one run, however many operations wait', async () => {
      assert.equal((await e.call('PUT', '/v1/default/banks/busy', {})).status, 200);
      // more waiting operations than one page of the old check-then-insert could see
      for (let i = 0; i < 110; i++) {
        await e.raw.insertOperation({
          projectId: 'default',
          bankId: 'busy',
          id: randomUUID(),
          kind: 'retain',
          payload: {},
          itemsCount: 0,
        });
      }
      const replies = await Promise.all(
        Array.from({ length: 20 }, () => e.call('POST', '/v1/default/banks/busy/consolidate', {})),
      );
      for (const r of replies) assert.ok(r.status < 300, JSON.stringify(r.body));
      assert.equal(new Set(replies.map((r) => r.body.operation_id)).size, 1);
      assert.equal(replies.filter((r) => !r.body.deduplicated).length, 1);
      const ops = await e.raw.listOperations('default', 'busy', { status: 'pending' }, { limit: 200 });
      assert.equal(ops.items.filter((o) => o.kind === 'consolidate').length, 1);
    });

    test("a Retain's first embedder never overwrites one recorded meanwhile", async () => {
      await e.raw.ensureBank('default', 'emb', {});
      await e.raw.updateBank('default', 'emb', { embedder: 'reembedded' });
      // a Retain that read the bank before the re-embed finished still says "unset"
      await e.raw.updateBank('default', 'emb', { embedderIfUnset: 'stale' });
      assert.equal((await e.raw.getBank('default', 'emb'))!.embedder, 'reembedded');
      await e.raw.ensureBank('default', 'emb2', {});
      await e.raw.updateBank('default', 'emb2', { embedderIfUnset: 'first' });
      assert.equal((await e.raw.getBank('default', 'emb2'))!.embedder, 'first');
    });

    test('concurrent directive creations never take a bank past its limit', async () => {
      assert.equal((await e.call('PUT', '/v1/default/banks/rules', {})).status, 200);
      for (let i = 0; i < MAX_DIRECTIVES - 5; i++) {
        assert.equal(
          (await e.call('POST', '/v1/default/banks/rules/directives', { text: `rule ${i}` })).status,
          201,
        );
      }
      const replies = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          e.call('POST', '/v1/default/banks/rules/directives', { text: `late rule ${i}` }),
        ),
      );
      assert.equal(replies.filter((r) => r.status === 201).length, 5);
      for (const r of replies.filter((x) => x.status !== 201)) {
        assert.equal(r.status, 409);
        assert.equal(r.body.error.code, 'conflict');
      }
      assert.equal((await e.raw.listDirectives('default', 'rules')).length, MAX_DIRECTIVES);
    });
  });
}

for (const engine of ENGINES) {
  describe(`encryption flipped by concurrent writers converges (${engine})`, () => {
    const e = encryptedAppForSuite(engine, { worker: true });

    test('whatever order 20 on/off switches land in, the rows end in the form the config says', async () => {
      const items = ['Ada keeps bees on the roof', 'The hives face south', 'Honey is harvested in August'];
      const r = await e.call('POST', '/v1/default/banks/flip/memories', {
        items: items.map((content) => ({ content })),
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const replies = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          e.call('PATCH', '/v1/default/banks/flip/config', {
            updates: { encryption: i % 2 === 0 ? 'managed' : 'none', disposition_empathy: (i % 5) + 1 },
          }),
        ),
      );
      for (const x of replies) assert.equal(x.status, 200, JSON.stringify(x.body));
      const target = (await e.raw.getBank('default', 'flip'))!.config.encryption;
      // the conversion queued by the switches finishes in the form of the final config
      await until(
        async () => {
          const st = await e.raw.bankEncryption('default', 'flip');
          const ops = await e.raw.listOperations('default', 'flip', {}, { limit: 100 });
          const busy = ops.items.some((o) => o.status === 'pending' || o.status === 'processing');
          return { converting: st?.key?.converting ?? false, busy };
        },
        (v) => !v.converting && !v.busy,
        60_000,
      );
      const raw = await e.raw.listMemories('default', 'flip', {}, { limit: 100 });
      assert.equal(raw.items.length, items.length);
      for (const m of raw.items) {
        assert.equal(isSealed(m.text), target === 'managed', `stored form of ${m.id} (${target})`);
      }
      const read = await e.call('GET', '/v1/default/banks/flip/memories');
      assert.deepEqual(read.body.items.map((m: any) => m.text).sort(), [...items].sort());
    });
  });
}

describe(`no lost config update across two app instances on one PostgreSQL`, {
  skip: process.env.MNEMO_TEST_DATABASE_URL ? false : 'needs MNEMO_TEST_DATABASE_URL',
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
    apps = await Promise.all(stores.map((s) => encryptedApp(s, key, { worker: false })));
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
      assert.deepEqual(Object.keys(s.overrides).sort(), Object.keys(EXPECTED).sort(), `round ${round}`);
      const view = await apps[1]!.call('GET', `/v1/default/banks/${bank}/config`);
      assert.deepEqual(view.body.overrides, EXPECTED, `round ${round}`);
      assert.ok(s.key, `round ${round}: the bank key exists`);
      assert.ok(s.reencrypts >= 1, `round ${round}: a re-encryption is queued`);
    }
  });
});
