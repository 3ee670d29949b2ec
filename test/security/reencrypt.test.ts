/**
 * Switching a populated bank's encryption on and off: the `reencrypt` operation converts every
 * row, readers see the same plaintext before, during and after, the keyword index keeps its
 * exact statistics, and a write in the middle lands in the new form.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isSealed } from '../../src/core/crypto/codec.js';
import { runAllSlices } from '../../src/core/operations.js';
import { encryptMemory, runReencryptOperation } from '../../src/core/crypto/reencrypt.js';
import { createLogger } from '../../src/api/logger.js';
import { OPERATION_RUNNERS } from '../../src/jobs/kinds.js';
import { startWorker } from '../../src/jobs/worker.js';
import type { Store } from '../../src/store/store.js';
import { keywordTerms } from '../../src/text/terms.js';
import { ENGINES, openTestStore } from '../helpers/engines.js';
import { type EncryptedApp, encryptedApp, newMasterKey } from './encryption-helpers.js';

const BANK = 'switch';
const P = 'default';
const path = (rest = '') => `/v1/default/banks/${BANK}${rest}`;

const ITEMS = [
  {
    content: 'Alice Smith adopted a beagle named Pepper',
    context: 'at the shelter',
    entities: [{ text: 'Alice Smith', type: 'PERSON' }],
  },
  { content: 'Pepper the beagle loves the beach', metadata: { session_id: 's1', mood: 'happy' } },
  {
    content: 'Bob Smith is training for a marathon in Lisbon',
    entities: [{ text: 'Bob Smith', type: 'PERSON' }],
  },
  { content: 'Bob ran twenty kilometres on Sunday', entities: [{ text: 'Bob', type: 'PERSON' }] },
  { content: 'Alice plays the cello in a quartet', metadata: { session_id: 's1' }, tags: ['music'] },
  { content: '\u0001e1:this plaintext only looks like a ciphertext', context: '\u0001p: so does this' },
];

const QUERIES = ['beagle Pepper', 'marathon Lisbon training', 'cello quartet', 'plaintext ciphertext looks'];

for (const engine of ENGINES) {
  describe(`switching encryption of a populated bank (${engine})`, () => {
    let e: EncryptedApp;
    let store: Store & { dispose(): Promise<void> };
    let before_: { list: unknown; entities: unknown; keyword: unknown; directives: unknown };

    /** What readers see, in a stable order. */
    async function view() {
      const list = (await e.call('GET', path('/memories?limit=100'))).body.items
        .map((m: any) => ({
          text: m.text,
          context: m.context,
          metadata: m.metadata,
          entities: m.entities,
          tags: m.tags,
        }))
        .sort((a: any, b: any) => a.text.localeCompare(b.text));
      const entities = (await e.call('GET', path('/entities'))).body.items
        .map((x: any) => ({ name: x.name, aliases: [...x.aliases].sort(), mentions: x.mention_count }))
        .sort((a: any, b: any) => a.name.localeCompare(b.name));
      const keyword = [];
      for (const q of QUERIES) {
        const hits = await e.services.store.keywordSearch(P, BANK, keywordTerms(q), {}, 10);
        keyword.push(hits.map((h) => ({ id: h.id, score: Math.round(h.score * 1e6) })));
      }
      const directives = (await e.call('GET', path('/directives'))).body.items.map(
        (d: any) => `${d.name}: ${d.text}`,
      );
      return { list, entities, keyword, directives };
    }

    /** The memories as stored, under the encryption layer. */
    const stored = async () => (await store.listMemories(P, BANK, {}, { limit: 100 })).items;

    const runConversion = () =>
      runAllSlices(e.services, runReencryptOperation, {
        id: 'manual',
        projectId: P,
        bankId: BANK,
        kind: 'reencrypt',
        payload: {},
        signal: new AbortController().signal,
      });

    before(async () => {
      store = await openTestStore(engine);
      e = await encryptedApp(store, newMasterKey(), { worker: false });
      const r = await e.call('POST', path('/memories'), { items: ITEMS });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const rule = await e.call('POST', path('/directives'), {
        name: 'tone',
        text: 'Be gentle about Pepper',
      });
      assert.ok(rule.status < 300, JSON.stringify(rule.body));
      // a queued retain whose payload sits in the operations table
      const q = await e.call('POST', path('/memories'), {
        async: true,
        items: [{ content: 'queued while plain' }],
      });
      assert.equal(q.status, 200);
      before_ = await view();
      assert.ok((before_.entities as any[]).some((x) => x.name === 'Bob Smith' && x.aliases.includes('Bob')));
    });
    after(async () => {
      await e.close();
      await store.dispose();
    });

    test('switching on: rows are converted in batches, readers see the same plaintext all along', async () => {
      assert.equal(
        (await e.call('PATCH', path('/config'), { updates: { encryption: 'managed' } })).status,
        200,
      );
      const st = await store.bankEncryption(P, BANK);
      assert.equal(st?.target, 'managed');
      assert.equal(st?.key?.converting, true);
      const ops = (await e.call('GET', path('/operations'))).body.items.map((o: any) => o.kind);
      assert.ok(ops.includes('reencrypt'), 'the switch queued the conversion');

      // one batch of two: the bank is half converted
      const codec = e.services.keyring!.codec(P, BANK, st!.key!);
      assert.equal(
        await store.convertMemories(P, BANK, true, 2, (rows) => rows.map((r) => encryptMemory(codec, r))),
        2,
      );
      const half = await stored();
      assert.equal(half.filter((m) => isSealed(m.text)).length, 2);
      // Mid-way a term's statistics are split between its plain and hashed forms, so scores
      // shift a little; what is found does not.
      const midway = await view();
      assert.deepEqual(midway.list, before_.list, 'mid-way, readers see exactly what they saw before');
      assert.deepEqual(midway.entities, before_.entities);
      assert.deepEqual(midway.directives, before_.directives);
      const ids = (k: unknown) => (k as { id: string }[][]).map((hits) => hits.map((h) => h.id).sort());
      assert.deepEqual(
        ids(midway.keyword),
        ids(before_.keyword),
        'and keyword search finds the same memories',
      );

      // a write in the middle lands sealed
      const w = await e.call('POST', path('/memories'), {
        items: [{ content: 'written mid-way about Pepper' }],
      });
      assert.equal(w.status, 200);
      const mid = (await stored()).find((m) => m.id === w.body.memory_ids[0])!;
      assert.ok(isSealed(mid.text));

      await runConversion();
      assert.equal((await store.bankEncryption(P, BANK))?.key?.converting, false);
      const all = await stored();
      assert.ok(
        all.every((m) => isSealed(m.text) && !JSON.stringify(m).includes('Pepper')),
        'every row sealed',
      );
      const ents = (await store.listEntities(P, BANK, { limit: 100 })).items;
      assert.ok(ents.length >= 2 && ents.every((x) => isSealed(x.name)));
      assert.ok(!JSON.stringify(ents).toLowerCase().includes('smith'));
      const rules = await store.listDirectives(P, BANK);
      assert.ok(rules.length === 1 && isSealed(rules[0]!.text) && isSealed(rules[0]!.name));
      // the queued payload was sealed too: no payload of the bank is left to seal
      const unsealed: unknown[] = [];
      await store.convertPayloads(P, BANK, true, 100, (p) => unsealed.push(p));
      assert.deepEqual(unsealed, []);

      assert.equal((await e.call('DELETE', path(`/memories/${w.body.memory_ids[0]}`))).status, 200);
      assert.deepEqual(await view(), before_, 'after: the same plaintext, the same keyword scores');
      // entity resolution still works through the hashed keys and aliases
      const bob = await e.call('POST', path('/memories'), {
        items: [{ content: 'Bob bought new shoes', entities: [{ text: 'Bob', type: 'PERSON' }] }],
      });
      const listed = await e.call('GET', path('/memories?limit=100'));
      const shoes = listed.body.items.find((m: any) => m.id === bob.body.memory_ids[0]);
      assert.deepEqual(shoes.entities, ['Bob Smith']);
      assert.equal((await e.call('DELETE', path(`/memories/${bob.body.memory_ids[0]}`))).status, 200);
    });

    test('switching off: every row goes back to plaintext with its keyword index intact', async () => {
      assert.equal((await e.call('PATCH', path('/config'), { updates: { encryption: 'none' } })).status, 200);
      assert.equal((await store.bankEncryption(P, BANK))?.key?.converting, true);
      await runConversion();
      const all = await stored();
      assert.ok(all.every((m) => !isSealed(m.text)));
      assert.ok(all.some((m) => m.text === 'Alice Smith adopted a beagle named Pepper'));
      const ents = (await store.listEntities(P, BANK, { limit: 100 })).items;
      assert.ok(ents.some((x) => x.name === 'Bob Smith'));
      assert.deepEqual(
        (await store.listDirectives(P, BANK)).map((d) => d.text),
        ['Be gentle about Pepper'],
      );
      const after_ = await view();
      // Entities mention counts and aliases come back too; the one resolved "Bob" memory was deleted.
      assert.deepEqual(after_, before_);
      // the queued retain now runs (its payload opened) and lands in plain form
      const worker = startWorker(e.services, createLogger('silent'), {
        runners: OPERATION_RUNNERS,
        pollMs: 20,
      });
      try {
        for (let i = 0; i < 600; i++) {
          if ((await stored()).some((m) => m.text === 'queued while plain')) break;
          await new Promise((r) => setTimeout(r, 50));
        }
      } finally {
        await worker.stop();
      }
      assert.ok((await stored()).some((m) => m.text === 'queued while plain'));
    });

    test('on and off again before the operation ran: it converges on the last setting', async () => {
      await e.call('PATCH', path('/config'), { updates: { encryption: 'managed' } });
      await e.call('PATCH', path('/config'), { updates: { encryption: 'none' } });
      await runConversion();
      assert.ok((await stored()).every((m) => !isSealed(m.text)));
      await e.call('PATCH', path('/config'), { updates: { encryption: 'managed' } });
      await runConversion();
      assert.ok((await stored()).every((m) => isSealed(m.text)));
      const list = (await e.call('GET', path('/memories?limit=100'))).body.items.map((m: any) => m.text);
      assert.ok(list.includes('\u0001e1:this plaintext only looks like a ciphertext'));
      assert.ok(list.includes('queued while plain'));
    });
  });
}
