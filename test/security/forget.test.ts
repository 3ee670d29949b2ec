/**
 * Provable forget, as an attacker checks it: retain, consolidate (observations), recall (cached
 * answers), evaluate, then delete a memory, a document, a bank, and read EVERY table of the
 * database directly for any row that still names the deleted subject (its ids, its words). The
 * receipt's counts must equal the rows that actually went, its signature must verify, and it
 * must be readable by whoever may read the bank, after the bank is gone too.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { consolidateBank } from '../../src/core/consolidate/consolidate.js';
import { encryptingStore } from '../../src/core/crypto/encrypting-store.js';
import { VectorCache } from '../../src/core/crypto/vector-cache.js';
import { forget } from '../../src/core/forget.js';
import type { Services } from '../../src/core/services.js';
import { storeOver } from '../../src/store/open.js';
import type { Db } from '../../src/store/db.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import { until } from '../helpers/until.js';

const BANK = 'forget-me';

/** Words that appear only in what is forgotten: no table may hold them afterwards. */
const SECRET_MEMORY = 'zanzibar';
const SECRET_DOCUMENT = 'quokkas';

const ITEMS = [
  {
    content: 'Alice drinks green tea every morning in Zanzibar.',
    entities: [{ text: 'Zanzibar', type: 'LOCATION' }],
  },
  { content: 'Alice drinks green tea every morning.' },
  {
    content: 'Bob feeds the quokkas at Rottnest every Sunday.',
    document_id: 'doc-quokka',
    entities: [{ text: 'Rottnest', type: 'LOCATION' }],
  },
  { content: 'Carol plays the cello in Oslo.' },
];

/** Row counts of every table of the schema. */
async function tableCounts(db: Db): Promise<Map<string, number>> {
  const tables = await db.query<{ name: string }>(
    `SELECT table_name::text AS name FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const out = new Map<string, number>();
  for (const { name } of tables) {
    const r = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${name}"`);
    out.set(name, r[0]!.n);
  }
  return out;
}

/** Every table's rows (as text) that contain `needle` (case-insensitive), by table. */
async function rowsContaining(
  db: Db,
  needle: string,
  except: string[] = [],
): Promise<Record<string, string[]>> {
  const tables = await db.query<{ name: string }>(
    `SELECT table_name::text AS name FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const out: Record<string, string[]> = {};
  for (const { name } of tables) {
    if (except.includes(name)) continue;
    const rows = await db.query<{ row: string }>(
      `SELECT t::text AS row FROM "${name}" t WHERE strpos(lower(t::text), lower($1)) > 0`,
      [needle],
    );
    if (rows.length) out[name] = rows.map((r) => r.row.slice(0, 200));
  }
  return out;
}

/** Tables whose row count went down, with how many rows went. */
function removed(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [t, n] of before) {
    const m = after.get(t) ?? 0;
    if (m < n) out[t] = n - m;
  }
  return out;
}

/** The receipt's counts of rows removed (not erasures in place, nor the derived `embeddings`). */
function rowDeletions(deleted: Record<string, number>): Record<string, number> {
  const {
    embeddings: _e,
    idempotency: _i,
    operation_payloads: _o,
    mental_models: _m,
    document_sources: _s,
    ...rest
  } = deleted;
  return rest;
}

for (const engine of ENGINES) {
  describe(`provable forget (${engine})`, () => {
    let t: TestApp;
    let db: Db;
    let ids: string[] = [];
    let scoped = '';
    let elsewhere = '';

    const ok = async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
      const r = await t.call(method, path, { body, headers });
      assert.ok(
        r.status >= 200 && r.status < 300,
        `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`,
      );
      return r.body;
    };

    before(async () => {
      const opened = await openTestDb(engine);
      db = opened.db;
      t = await testApp(engine, { store: Object.assign(storeOver(db), { dispose: opened.dispose }) });
      const retained = await ok(
        'POST',
        bankPath(BANK, '/memories'),
        { items: ITEMS },
        { 'idempotency-key': 'r-1' },
      );
      assert.equal(retained.success, true);
      const listed = await ok('GET', bankPath(BANK, '/memories?limit=100'));
      const byText = new Map<string, string>(
        listed.items.map((m: { text: string; id: string }) => [m.text, m.id] as [string, string]),
      );
      ids = ITEMS.map((it) => byText.get(it.content)!);
      assert.ok(ids.every(Boolean), `every item is one memory: ${JSON.stringify([...byText.keys()])}`);
      await ok('POST', bankPath('other-bank', '/memories'), { items: [{ content: 'Dave sails.' }] });
      const mint = async (banks: string[]) =>
        (
          await ok('POST', '/v1/default/projects/default/keys', {
            name: 'k',
            scopes: ['recall', 'retain'],
            banks,
          })
        ).key as string;
      scoped = await mint([BANK]);
      elsewhere = await mint(['other-bank']);
    });
    after(() => t.close());

    test('a memory: its observations, entity, vocabulary, cached answers, replies and evaluations go', async () => {
      const consolidated = await consolidateBank(t.services, 'default', BANK);
      assert.ok(consolidated.observations_created >= 1, JSON.stringify(consolidated));
      const [zanzibar, tea] = [ids[0]!, ids[1]!];
      const sources = await db.query<{ observation_id: string }>(
        'SELECT observation_id::text AS observation_id FROM observation_sources WHERE memory_id = $1',
        [zanzibar],
      );
      assert.ok(sources.length >= 1, 'the memory supports an observation');
      const observation = sources[0]!.observation_id;
      const recalled = await ok('POST', bankPath(BANK, '/memories/recall'), {
        query: 'Where does Alice drink tea?',
      });
      assert.ok(recalled.results.some((r: { id: string }) => r.id === zanzibar));
      assert.ok((t.services.recallCache?.size ?? 0) > 0, 'the answer is cached');
      await ok('POST', bankPath(BANK, '/evaluations'), {
        cases: [{ query: 'Where does Alice drink tea?', expected_memory_ids: [zanzibar] }],
      });
      // A mental model refreshed (extractive Reflect) from the bank: its content draws on the memory.
      const made = await ok('POST', bankPath(BANK, '/mental-models'), {
        id: 'tea',
        name: 'Tea',
        source_query: 'Where does Alice drink green tea?',
      });
      const worker = await t.reconfigured({ runWorker: true });
      const op = await until(
        async () => (await worker.call('GET', bankPath(BANK, `/operations/${made.operation_id}`))).body,
        (o) => o.status === 'completed' || o.status === 'failed',
      );
      assert.equal(op.status, 'completed', JSON.stringify(op));
      // The bank's other queued work (the Retain's consolidation) done, the worker stops: what
      // the forget leaves queued is checked below before anything runs it.
      await until(
        async () =>
          (await worker.call('GET', bankPath(BANK, '/operations?status=pending'))).body.items.length,
        (n) => n === 0,
      );
      await worker.close();
      assert.ok(
        (await rowsContaining(db, SECRET_MEMORY)).mental_models,
        'the model content holds the memory',
      );
      assert.ok(
        Object.keys(await rowsContaining(db, SECRET_MEMORY)).length >= 3,
        'the attack has rows to find',
      );

      const before = await tableCounts(db);
      const res = await ok('DELETE', bankPath(BANK, `/memories/${zanzibar}`));
      const afterwards = await tableCounts(db);
      assert.equal(res.deleted, true);
      assert.equal(res.id, zanzibar);
      const r = res.receipt;
      assert.deepEqual(r.subject, { kind: 'memory', bank_id: BANK, id: zanzibar });

      // Nothing anywhere names the memory or the observation, or holds its words, but its receipt.
      assert.deepEqual(await rowsContaining(db, zanzibar, ['receipts']), {});
      assert.deepEqual(await rowsContaining(db, observation, ['receipts']), {});
      assert.deepEqual(await rowsContaining(db, SECRET_MEMORY), {});
      // The receipt counts exactly the rows that went (the receipt itself and the re-consolidation
      // mark are the only rows added).
      assert.deepEqual(rowDeletions(r.deleted), removed(before, afterwards));
      assert.equal(r.deleted.memories, 2, 'the memory and its observation');
      assert.equal(r.deleted.observations, 1);
      assert.equal(r.deleted.entities, 1, 'Zanzibar, mentioned by it alone');
      assert.equal(r.deleted.embeddings, 2);
      assert.equal(r.deleted.evaluations, 1);
      assert.equal(r.deleted.mental_models, 1, 'its content and answer erased');
      const model = await ok('GET', bankPath(BANK, '/mental-models/tea'));
      assert.equal(model.is_stale, true);
      assert.equal(model.refresh_pending, true, 'a refresh is asked for');
      // The kept answer of the Retain named the memory: a replay is refused, not run again.
      assert.equal(r.deleted.idempotency, 1);
      const replay = await t.call('POST', bankPath(BANK, '/memories'), {
        body: { items: ITEMS },
        headers: { 'idempotency-key': 'r-1' },
      });
      assert.equal(replay.status, 409, JSON.stringify(replay.body));
      assert.equal(replay.body.error.code, 'already_done');
      assert.equal(replay.body.error.receipt_id, r.id);
      assert.equal(afterwards.get('receipts'), (before.get('receipts') ?? 0) + 1);
      // The other memory behind the observation is consolidated again, then unmarked.
      assert.deepEqual(
        (await db.query<{ id: string }>('SELECT memory_id::text AS id FROM consolidation_redo')).map(
          (x) => x.id,
        ),
        [tea],
      );
      assert.equal(t.services.recallCache?.size ?? 0, 0, 'cached answers of the bank are dropped');
      await consolidateBank(t.services, 'default', BANK);
      assert.equal((await db.query('SELECT 1 FROM consolidation_redo')).length, 0);
      // Deleted again: 404, and nothing changes.
      assert.equal((await t.call('DELETE', bankPath(BANK, `/memories/${zanzibar}`))).status, 404);
    });

    test('a document: its memories, entity, vocabulary and the Retain payloads go', async () => {
      const quokka = ids[2]!;
      const before = await tableCounts(db);
      const res = await ok('DELETE', bankPath(BANK, '/documents/doc-quokka'));
      const afterwards = await tableCounts(db);
      assert.equal(res.success, true);
      assert.equal(res.memories_deleted, 1);
      assert.equal(res.memory_units_deleted, 1);
      const r = res.receipt;
      assert.deepEqual(r.subject, { kind: 'document', bank_id: BANK, id: 'doc-quokka' });
      assert.deepEqual(await rowsContaining(db, quokka, ['receipts']), {});
      assert.deepEqual(await rowsContaining(db, 'doc-quokka', ['receipts']), {});
      assert.deepEqual(await rowsContaining(db, SECRET_DOCUMENT), {});
      assert.deepEqual(await rowsContaining(db, 'rottnest'), {});
      assert.deepEqual(rowDeletions(r.deleted), removed(before, afterwards));
      assert.equal(r.deleted.documents, 1);
      assert.equal(r.deleted.idempotency, undefined, 'the kept Retain answer was erased by the first forget');
    });

    test('receipts: read again by whoever may read the bank, signed, tamper-evident', async () => {
      const res = await ok('DELETE', bankPath(BANK, `/memories/${ids[3]}`));
      const r = res.receipt;
      assert.deepEqual(await ok('GET', `/v1/default/receipts/${r.id}`), r);
      assert.equal((await t.call('GET', `/v1/default/receipts/${r.id}`, { token: scoped })).status, 200);
      assert.equal((await t.call('GET', `/v1/default/receipts/${r.id}`, { token: elsewhere })).status, 404);
      assert.equal((await t.call('GET', '/v1/default/receipts/not-a-uuid')).status, 404);
      const verdict = await ok('POST', '/v1/default/receipts/verify', r);
      assert.deepEqual(verdict, { valid: true, reason: null, key_id: r.key_id });
      const forged = { ...r, deleted: { ...r.deleted, memories: 0 } };
      assert.equal((await ok('POST', '/v1/default/receipts/verify', forged)).reason, 'bad_signature');
      const moved = { ...r, subject: { ...r.subject, bank_id: 'other-bank' } };
      assert.equal((await ok('POST', '/v1/default/receipts/verify', moved)).valid, false);
      const otherKey = { ...r, key_id: '0000000000000000' };
      assert.equal((await ok('POST', '/v1/default/receipts/verify', otherKey)).reason, 'unknown_key');
    });

    test('a bank: every row keyed by it goes; its receipt outlives it', async () => {
      const before = await tableCounts(db);
      const res = await ok('DELETE', bankPath(BANK));
      const afterwards = await tableCounts(db);
      assert.equal(res.success, true);
      assert.equal(res.deleted_count, 1);
      const r = res.receipt;
      assert.deepEqual(r.subject, { kind: 'bank', bank_id: BANK, id: null });
      // The audit log says who did what to the bank (never content); receipts are about it; a
      // key's bank patterns are the operator's names, and may match a bank made later.
      assert.deepEqual(await rowsContaining(db, BANK, ['receipts', 'audit', 'api_keys']), {});
      assert.deepEqual(await rowsContaining(db, ids[1]!, ['receipts']), {});
      const { embeddings: _e, ...rows } = r.deleted;
      assert.deepEqual(rows, removed(before, afterwards));
      assert.equal(r.deleted.banks, 1);
      assert.equal(r.deleted.memories, 1);
      // The receipts of the bank stay readable by a key of the bank, the bank gone.
      assert.equal((await t.call('GET', `/v1/default/receipts/${r.id}`, { token: scoped })).status, 200);
      assert.equal((await ok('POST', '/v1/default/receipts/verify', r)).valid, true);
      // The other bank is untouched.
      assert.equal((await ok('GET', bankPath('other-bank', '/memories'))).items.length, 1);
    });
  });
}

for (const engine of ENGINES) {
  describe(`provable forget in an encrypted bank (${engine})`, () => {
    const masterKey = randomBytes(32).toString('base64');
    let t: TestApp;
    let db: Db;
    const vectors = new VectorCache(64 * 2 ** 20);
    /** The services over a store whose in-process vector copies the test can see. */
    let s: Services;

    before(async () => {
      const opened = await openTestDb(engine);
      db = opened.db;
      const raw = Object.assign(storeOver(db), { dispose: opened.dispose });
      t = await testApp(engine, { store: raw, masterKey });
      const store = encryptingStore(raw, t.services.keyring!, { onSwitch: async () => {} }, { vectors });
      s = { ...t.services, store };
      assert.equal((await t.call('PUT', bankPath('vault'), { body: {} })).status, 200);
      const on = await t.call('PATCH', bankPath('vault', '/config'), {
        body: { updates: { encryption: 'managed' } },
      });
      assert.equal(on.status, 200, JSON.stringify(on.body));
      const r = await t.call('POST', bankPath('vault', '/memories'), {
        body: { items: [{ content: 'The vault code is 4711.' }, { content: 'The vault opens at dawn.' }] },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    });
    after(() => t.close());

    const search = async () =>
      s.store.semanticSearch('default', 'vault', (await s.embedder.embed(['vault code']))[0]!, {}, 10);

    test('a memory: its sealed vector goes, and the decrypted copy in this process', async () => {
      const [first] = (await ok(t, 'GET', bankPath('vault', '/memories'))).items as { id: string }[];
      const id = first!.id;
      assert.ok((await search()).some((h) => h.id === id));
      const held = vectors.bytes;
      assert.ok(held > 0, 'the decrypted vectors are cached');
      const { receipt } = await forget(s, 'default', 'vault', { kind: 'memory', id });
      assert.equal(receipt.deleted.embeddings, 1);
      assert.ok(vectors.bytes < held, 'its vector left the cache at once');
      assert.deepEqual(await rowsContaining(db, id, ['receipts']), {});
      assert.ok(!(await search()).some((h) => h.id === id));
    });

    test('the bank: its data key goes first (crypto-shredding), and the cached copies', async () => {
      assert.equal((await db.query(`SELECT 1 FROM bank_keys WHERE bank_id = 'vault'`)).length, 1);
      const { receipt } = await forget(s, 'default', 'vault', { kind: 'bank' });
      assert.equal(receipt.deleted.bank_keys, 1);
      assert.equal(receipt.deleted.banks, 1);
      assert.equal(vectors.bytes, 0);
      assert.equal((await db.query('SELECT 1 FROM bank_keys')).length, 0);
      assert.deepEqual(await rowsContaining(db, 'vault', ['receipts', 'audit']), {});
      // Signed by the key derived from the master key: verifiable, and not the stored random one.
      assert.equal((await db.query(`SELECT 1 FROM settings WHERE key = 'receipt_signing_key'`)).length, 0);
      assert.equal((await ok(t, 'POST', '/v1/default/receipts/verify', receipt)).valid, true);
    });
  });
}

async function ok(t: TestApp, method: string, path: string, body?: unknown) {
  const r = await t.call(method, path, { body });
  assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}
