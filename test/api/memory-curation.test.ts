import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { consolidateBank } from '../../src/core/consolidate/consolidate.js';
import type { Db } from '../../src/store/db.js';
import { storeOver } from '../../src/store/open.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import { integrityProblems } from '../stress/integrity.js';

for (const engine of ENGINES) {
  describe(`memory curation: PATCH and per-memory observations (${engine})`, () => {
    let t: TestApp;
    let db: Db;
    /** A key of the default project: `/v1/me` takes a project's key, not the operator's token. */
    let own = '';
    before(async () => {
      const opened = await openTestDb(engine);
      db = opened.db;
      t = await testApp(engine, { store: Object.assign(storeOver(db), { dispose: opened.dispose }) });
      const k = await t.call('POST', '/v1/default/projects/default/keys', {
        body: { name: 'own', scopes: ['retain', 'recall', 'admin'] },
      });
      own = k.body.key;
    });
    const token = (base?: string) => (base === '/v1/me' ? own : undefined);
    after(() => t.close());

    const retain = async (bank: string, items: { content: string; entities?: { text: string }[] }[]) => {
      const r = await t.call('POST', bankPath(bank, '/memories'), { body: { items } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.memory_ids as string[];
    };
    const recalled = async (bank: string, query: string, base?: string) => {
      const r = await t.call('POST', bankPath(bank, '/memories/recall', base), {
        body: { query },
        token: token(base),
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return (r.body.results as { id: string; text: string }[]).map((x) => x.id);
    };
    const patch = (bank: string, id: string, body: unknown, base?: string) =>
      t.call('PATCH', bankPath(bank, `/memories/${id}`, base), { body, token: token(base) });
    const observations = async (bank: string) =>
      (await t.call('GET', bankPath(bank, '/memories?type=observation'))).body.items.filter(
        (o: { metadata: { proof_count?: number } }) => o.metadata.proof_count !== undefined,
      ) as { id: string; metadata: { proof_count: number; source_memory_ids: string[] } }[];

    test('an invalidated memory is kept and listed but never recalled; restored, it is recalled again', async () => {
      const bank = 'curate-state';
      const [kiwi, other] = await retain(bank, [
        { content: 'Marta grows kiwis in her garden.' },
        { content: 'Marta plays the cello on Sundays.' },
      ]);
      // Recalled (and the answer cached) before the change.
      assert.ok((await recalled(bank, 'kiwis garden')).includes(kiwi!));
      for (const base of ['/v1/default', '/v1/me']) {
        const r = await patch(bank, kiwi!, { state: 'invalidated', reason: 'wrong fruit' }, base);
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(r.body.state, 'invalidated');
        assert.equal(r.body.invalidation_reason, 'wrong fruit');
      }
      for (const base of ['/v1/default', '/v1/me'])
        assert.ok(
          !(await recalled(bank, 'kiwis garden', base)).includes(kiwi!),
          'the cached answer is not served',
        );
      assert.ok((await recalled(bank, 'Marta cello Sundays')).includes(other!));
      const got = await t.call('GET', bankPath(bank, `/memories/${kiwi}`));
      assert.equal(got.body.state, 'invalidated');
      // mnemo's listing shows every state; Hindsight's hides invalidated memories unless asked.
      const all = await t.call('GET', bankPath(bank, '/memories'));
      assert.equal(all.body.items.length, 2);
      const valid = await t.call('GET', bankPath(bank, '/memories/list'));
      assert.deepEqual(
        valid.body.items.map((m: { id: string }) => m.id),
        [other],
      );
      assert.equal(valid.body.total, 1);
      const gone = await t.call('GET', bankPath(bank, '/memories/list?state=invalidated'));
      assert.deepEqual(
        gone.body.items.map((m: { id: string; state: string }) => [m.id, m.state]),
        [[kiwi, 'invalidated']],
      );
      // Reflect reads what Recall finds: the invalidated memory is not among its sources.
      const reflected = await t.call('POST', bankPath(bank, '/reflect'), {
        body: { query: 'What does Marta grow?' },
      });
      assert.equal(reflected.status, 200);
      assert.ok(!JSON.stringify(reflected.body).includes('kiwis'));

      const back = await patch(bank, kiwi!, { state: 'valid' });
      assert.equal(back.status, 200);
      assert.equal(back.body.state, 'valid');
      assert.equal(back.body.invalidation_reason, null);
      assert.ok((await recalled(bank, 'kiwis garden')).includes(kiwi!));
      const history = await t.call('GET', bankPath(bank, `/memories/${kiwi}/history`));
      assert.deepEqual(
        history.body.history.map((e: { event: string }) => e.event),
        ['retained', 'invalidated', 'restored'],
      );
    });

    /** A memory's keyword postings as stored, in term order. */
    const postings = (bank: string, id: string) =>
      db.query<{ term: string; tf: number; dl: number }>(
        `SELECT term, tf, dl FROM memory_terms WHERE project_id = 'default' AND bank_id = $1 AND memory_id = $2
         ORDER BY term`,
        [bank, id],
      );
    const consistent = async () => assert.deepEqual(await integrityProblems(db), []);

    test('an invalidated memory leaves the keyword index (exact document frequencies); restored, it is back as it was', async () => {
      const bank = 'curate-postings';
      const [kiwi, other] = await retain(bank, [
        { content: 'Marta grows kiwis in her garden.' },
        { content: 'Paul buys kiwis at the market.' },
      ]);
      const before = await postings(bank, kiwi!);
      assert.ok(before.length > 3);
      assert.equal((await patch(bank, kiwi!, { state: 'invalidated' })).status, 200);
      // Its postings take no candidate slot of the keyword channel, and no term counts it.
      assert.deepEqual(await postings(bank, kiwi!), []);
      await consistent();
      const garden = await db.query<{ df: number }>(
        `SELECT df FROM bank_terms WHERE project_id = 'default' AND bank_id = $1 AND term = 'garden'`,
        [bank],
      );
      assert.ok((garden[0]?.df ?? 0) === 0, 'a term only it held is held by none');
      const kiwis = await t.services.store.keywordSearch('default', bank, ['kiwi', 'kiwis'], {}, 10);
      assert.deepEqual(
        kiwis.map((h) => h.id),
        [other],
      );
      assert.equal((await patch(bank, kiwi!, { state: 'valid' })).status, 200);
      assert.deepEqual(await postings(bank, kiwi!), before, 'rebuilt exactly');
      await consistent();
      assert.ok((await recalled(bank, 'garden kiwis')).includes(kiwi!));
      // Edited while invalidated: still out of the index; restored, its new text is in it.
      assert.equal((await patch(bank, kiwi!, { state: 'invalidated' })).status, 200);
      const edited = await patch(bank, kiwi!, { text: 'Marta grows figs by the wall.' });
      assert.equal(edited.status, 200, JSON.stringify(edited.body));
      assert.equal(edited.body.state, 'invalidated');
      assert.deepEqual(await postings(bank, kiwi!), []);
      await consistent();
      assert.equal(
        (await patch(bank, kiwi!, { state: 'valid', text: 'Marta grows figs by the old wall.' })).status,
        200,
      );
      const terms = (await postings(bank, kiwi!)).map((p) => p.term);
      assert.ok(terms.includes('fig') || terms.includes('figs'), terms.join(' '));
      assert.ok(!terms.includes('garden'));
      await consistent();
      // Invalidated and edited in one PATCH: out of the index too.
      assert.equal(
        (await patch(bank, other!, { state: 'invalidated', text: 'Paul buys plums.' })).status,
        200,
      );
      assert.deepEqual(await postings(bank, other!), []);
      await consistent();
    });

    /** Tables with a row that holds `needle` (case-insensitive), each with its rows. */
    const holding = async (needle: string) => {
      const tables = await db.query<{ name: string }>(
        `SELECT table_name::text AS name FROM information_schema.tables
         WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
      );
      const out: Record<string, string[]> = {};
      for (const { name } of tables) {
        const rows = await db.query<{ row: string }>(
          `SELECT t::text AS row FROM "${name}" t WHERE strpos(lower(t::text), lower($1)) > 0`,
          [needle],
        );
        if (rows.length) out[name] = rows.map((r) => r.row.slice(0, 160));
      }
      return out;
    };

    test('no word of an edited text stays anywhere; a forgotten invalidated memory leaves none', async () => {
      const bank = 'curate-words';
      const [edited, retired] = await retain(bank, [
        { content: 'Marta hides the key under the quokkaqv stone.' },
        { content: 'Paul buried the wombatqv coin by the gate.' },
      ]);
      const r = await patch(bank, edited!, { text: 'Marta hides the key under the mat.' });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(await holding('quokkaqv'), {}, 'the old text’s terms left the vocabulary too');
      assert.equal((await patch(bank, retired!, { state: 'invalidated' })).status, 200);
      assert.deepEqual(Object.keys(await holding('wombatqv')).sort(), ['memories'], 'kept in its row only');
      assert.equal((await t.call('DELETE', bankPath(bank, `/memories/${retired}`))).status, 200);
      assert.deepEqual(await holding('wombatqv'), {});
      await consistent();
    });

    test('an entity’s page and counts leave invalidated memories out', async () => {
      const bank = 'curate-entity';
      const [a, b] = await retain(bank, [
        { content: 'Ines drives a red tractor.', entities: [{ text: 'Ines' }] },
        { content: 'Ines sells cheese in Braga.', entities: [{ text: 'Ines' }] },
      ]);
      const ines = async () =>
        (await t.call('GET', bankPath(bank, '/entities'))).body.items.find(
          (e: { name: string }) => e.name === 'Ines',
        ) as { id: string; mention_count: number } | undefined;
      const id = (await ines())!.id;
      const page = async () => {
        const r = await t.call('GET', bankPath(bank, `/entities/${id}`));
        assert.equal(r.status, 200, JSON.stringify(r.body));
        return r.body as { mention_count: number; observations: { text: string }[] };
      };
      assert.equal((await page()).observations.length, 2);
      assert.equal((await patch(bank, a!, { state: 'invalidated' })).status, 200);
      const shown = await page();
      assert.deepEqual(
        shown.observations.map((o) => o.text),
        ['Ines sells cheese in Braga.'],
      );
      assert.equal(shown.mention_count, 1);
      assert.equal((await ines())?.mention_count, 1);
      await consistent();
      // Its only memory invalidated: the entity leaves the listing; restored, it is back.
      assert.equal((await patch(bank, b!, { state: 'invalidated' })).status, 200);
      assert.equal(await ines(), undefined);
      assert.equal((await page()).observations.length, 0);
      await consistent();
      // An edit of an invalidated memory's entities keeps the counts right.
      assert.equal((await patch(bank, a!, { entities: ['Ines', 'Braga'] })).status, 200);
      await consistent();
      for (const m of [a!, b!]) assert.equal((await patch(bank, m, { state: 'valid' })).status, 200);
      assert.equal((await ines())?.mention_count, 2);
      assert.equal((await page()).observations.length, 2);
      await consistent();
      // A forgotten invalidated memory leaves the counts exact.
      assert.equal((await patch(bank, a!, { state: 'invalidated' })).status, 200);
      assert.equal((await t.call('DELETE', bankPath(bank, `/memories/${a}`))).status < 300, true);
      assert.equal((await ines())?.mention_count, 1);
      await consistent();
    });

    test('the memory graph draws no link to or from an invalidated memory, even when it is a node', async () => {
      const bank = 'curate-graph';
      const [a, b, c] = await retain(bank, [
        { content: 'Quirin repairs clocks in Graz.', entities: [{ text: 'Quirin' }, { text: 'Graz' }] },
        { content: 'Quirin bakes rye bread.', entities: [{ text: 'Quirin' }] },
        { content: 'Graz has a clock tower.', entities: [{ text: 'Graz' }] },
      ]);
      const links = async () => {
        const r = await t.call('GET', bankPath(bank, '/graph'));
        assert.equal(r.status, 200, JSON.stringify(r.body));
        return {
          nodes: (r.body.nodes as { id: string }[]).map((n) => n.id).sort(),
          edges: (r.body.edges as { from: string; to: string }[])
            .map((e) => [e.from, e.to].sort().join(' '))
            .sort(),
        };
      };
      const pair = (x: string, y: string) => [x, y].sort().join(' ');
      assert.deepEqual((await links()).edges, [pair(a!, b!), pair(a!, c!)].sort());
      assert.equal((await patch(bank, a!, { state: 'invalidated' })).status, 200);
      const after = await links();
      // The listing shows every state, so it is still a node; it links to nothing.
      assert.ok(after.nodes.includes(a!));
      assert.deepEqual(after.edges, []);
      assert.equal((await patch(bank, a!, { state: 'valid' })).status, 200);
      assert.deepEqual((await links()).edges, [pair(a!, b!), pair(a!, c!)].sort());
    });

    test('an edit rebuilds the keyword postings, entities and vector in place', async () => {
      const bank = 'curate-edit';
      const [id] = await retain(bank, [
        { content: 'Ines drives a red tractor.', entities: [{ text: 'Ines' }] },
      ]);
      const r = await patch(bank, id!, {
        text: 'Ines rides a blue bicycle.',
        entities: ['Ines', 'Bicycle Club'],
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.id, id);
      assert.equal(r.body.text, 'Ines rides a blue bicycle.');
      assert.deepEqual(r.body.entities, ['Bicycle Club', 'Ines']);
      assert.ok(r.body.edited_at);
      assert.ok((await recalled(bank, 'bicycle')).includes(id!));
      const kw = await t.services.store.keywordSearch('default', bank, ['tractor'], {}, 10);
      assert.equal(kw.length, 0, 'the old text’s postings are gone');
      const now = await t.services.store.keywordSearch('default', bank, ['bicycl', 'bicycle'], {}, 10);
      assert.deepEqual(
        now.map((h) => h.id),
        [id],
      );
      const bankRow = await t.services.store.getBank('default', bank);
      assert.equal(bankRow?.memory_count, 1);
      const history = await t.call('GET', bankPath(bank, `/memories/${id}/history`));
      const edited = history.body.history.find((e: { event: string }) => e.event === 'edited');
      assert.deepEqual(edited.fields, ['text', 'entities']);
      // Context cleared with '', dates set and cleared.
      const c = await patch(bank, id!, { context: 'said at lunch', occurred_start: '2024-01-02T00:00:00Z' });
      assert.equal(c.body.context, 'said at lunch');
      assert.equal(c.body.occurred_start, '2024-01-02T00:00:00.000Z');
      const cleared = await patch(bank, id!, { context: '', occurred_start: '' });
      assert.equal(cleared.body.context, null);
      assert.equal(cleared.body.occurred_start, null);
    });

    test('bad requests are 4xx: nothing to change, an unknown memory, an observation, a bad state', async () => {
      const bank = 'curate-bad';
      const [a] = await retain(bank, [
        { content: 'Tomas works as a baker in Porto.' },
        { content: 'tomas works as a baker in porto' },
      ]);
      assert.equal((await patch(bank, a!, {})).status, 400);
      assert.equal((await patch(bank, a!, { state: 'deleted' })).status, 400);
      assert.equal((await patch(bank, a!, { text: '' })).status, 400);
      assert.equal(
        (await patch(bank, '00000000-0000-4000-8000-000000000000', { state: 'valid' })).status,
        404,
      );
      assert.equal((await patch(bank, 'not-a-uuid', { state: 'valid' })).status, 404);
      assert.equal((await patch('no-such-bank', a!, { state: 'valid' })).status, 404);
      await consolidateBank(t.services, 'default', bank);
      const [obs] = await observations(bank);
      assert.ok(obs);
      const r = await patch(bank, obs.id, { state: 'invalidated' });
      assert.equal(r.status, 400);
      assert.match(r.body.error.message, /derived/);
    });

    test('DELETE .../memories/{id}/observations deletes what was derived from it and consolidates it again', async () => {
      const bank = 'curate-obs';
      const ids = await retain(bank, [
        { content: 'Lena teaches chemistry at the city school.' },
        { content: 'lena teaches chemistry at the city school' },
        { content: 'Lena teaches chemistry at the city school!' },
      ]);
      await consolidateBank(t.services, 'default', bank);
      const [obs] = await observations(bank);
      assert.equal(obs?.metadata.proof_count, 3);
      const cleared = await t.call('DELETE', bankPath(bank, `/memories/${ids[0]}/observations`));
      assert.equal(cleared.status, 200, JSON.stringify(cleared.body));
      assert.deepEqual(cleared.body, { deleted_count: 1 });
      assert.equal((await observations(bank)).length, 0);
      // The memory and the others behind the deleted observation are read again, only they.
      const run = await consolidateBank(t.services, 'default', bank);
      assert.equal(run.processed, 3);
      const [again] = await observations(bank);
      assert.equal(again?.metadata.proof_count, 3);
      // Nothing derived from it: 0, and a memory that does not exist is 404.
      const none = await t.call('DELETE', bankPath(bank, `/memories/${again!.id}/observations`, '/v1/me'), {
        token: own,
      });
      assert.deepEqual(none.body, { deleted_count: 0 });
      const missing = await t.call(
        'DELETE',
        bankPath(bank, '/memories/00000000-0000-4000-8000-000000000000/observations'),
      );
      assert.equal(missing.status, 404);

      // Invalidating a source takes its observation back; consolidation rebuilds it without it.
      assert.equal((await patch(bank, ids[1]!, { state: 'invalidated' })).status, 200);
      assert.equal((await observations(bank)).length, 0);
      await consolidateBank(t.services, 'default', bank);
      const [rebuilt] = await observations(bank);
      assert.equal(rebuilt?.metadata.proof_count, 2);
      assert.ok(!rebuilt!.metadata.source_memory_ids.includes(ids[1]!));
    });

    test('two PATCHes at once lose neither change', async () => {
      const bank = 'curate-race';
      const [id] = await retain(bank, [{ content: 'Omar keeps bees on the roof.' }]);
      for (let round = 0; round < 3; round++) {
        const [a, b] = await Promise.all([
          patch(bank, id!, { text: `Omar keeps ${round} hives of bees on the roof.` }),
          patch(bank, id!, { state: round % 2 ? 'valid' : 'invalidated', reason: `round ${round}` }),
        ]);
        assert.equal(a.status, 200, JSON.stringify(a.body));
        assert.equal(b.status, 200, JSON.stringify(b.body));
        const m = (await t.call('GET', bankPath(bank, `/memories/${id}`))).body;
        assert.equal(m.text, `Omar keeps ${round} hives of bees on the roof.`);
        assert.equal(m.state, round % 2 ? 'valid' : 'invalidated');
      }
      await consistent();
      // Two edits at once: one is written over the other whole, never a mix of the two (valid
      // again, so that the keyword index shows which).
      assert.equal((await patch(bank, id!, { state: 'valid' })).status, 200);
      const [x, y] = await Promise.all([
        patch(bank, id!, { text: 'Omar sells honey at the market.' }),
        patch(bank, id!, { text: 'Omar bottles mead in the cellar.' }),
      ]);
      assert.equal(x.status, 200, JSON.stringify(x.body));
      assert.equal(y.status, 200, JSON.stringify(y.body));
      const final = (await t.call('GET', bankPath(bank, `/memories/${id}`))).body.text as string;
      const word = final.includes('honey') ? 'honey' : 'mead';
      const other = word === 'honey' ? 'mead' : 'honey';
      assert.equal((await t.services.store.keywordSearch('default', bank, [word], {}, 10)).length, 1);
      assert.equal((await t.services.store.keywordSearch('default', bank, [other], {}, 10)).length, 0);
      await consistent();
    });

    test('keys: another project, a recall-only key and a key of another bank cannot curate', async () => {
      const bank = 'curate-keys';
      const [id] = await retain(bank, [{ content: 'Noor collects old maps.' }]);
      assert.equal(
        (await t.call('POST', '/v1/default/projects', { body: { id: 'cur-other', name: 'Other' } })).status,
        201,
      );
      const mint = async (project: string, scopes: string[], banks?: string[]) => {
        const r = await t.call('POST', `/v1/default/projects/${project}/keys`, {
          body: { name: 'k', scopes, banks },
        });
        assert.equal(r.status, 201, JSON.stringify(r.body));
        return r.body.key as string;
      };
      const foreign = await mint('cur-other', ['retain', 'recall']);
      const reader = await mint('default', ['recall']);
      const elsewhere = await mint('default', ['retain', 'recall'], ['someone-else']);
      for (const base of ['/v1/default', '/v1/me']) {
        const calls = [
          ['PATCH', bankPath(bank, `/memories/${id}`, base), { state: 'invalidated' }],
          ['DELETE', bankPath(bank, `/memories/${id}/observations`, base), undefined],
        ] as const;
        for (const [method, path, body] of calls) {
          // /v1/default is the default project's: another project's key is not one of its keys.
          assert.equal(
            (await t.call(method, path, { body, token: foreign })).status,
            base === '/v1/me' ? 404 : 401,
            `${method} ${path}`,
          );
          assert.equal(
            (await t.call(method, path, { body, token: reader })).status,
            403,
            `${method} ${path}`,
          );
          assert.equal(
            (await t.call(method, path, { body, token: elsewhere })).status,
            404,
            `${method} ${path}`,
          );
        }
      }
      assert.equal((await t.call('GET', bankPath(bank, `/memories/${id}`))).body.state, 'valid');
    });
  });
}
