/**
 * The routes added last (files/retain, document transfer, reprocess, curation), attacked as a
 * hostile tenant: a project with its budget spent must not make the server parse its files; an
 * upload is charged whole or refused whole; keys without the scope, of another bank or of
 * another project reach nothing; an encrypted bank's queued imports and uploads are sealed in
 * every row; two instances importing the same archive at once store each document once.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { buildArchive } from '../../src/core/transfer/archive.js';
import type { Db } from '../../src/store/db.js';
import { storeOver } from '../../src/store/open.js';
import { ADMIN, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES, openTestDb } from '../helpers/engines.js';
import { until } from '../helpers/until.js';
import { newMasterKey } from './encryption-helpers.js';

const canary = (tag: string) => `zq${tag}${randomBytes(5).toString('hex')}`;
const me = (bank: string, rest = '') => `/v1/me/banks/${encodeURIComponent(bank)}${rest}`;

type Part = { name: string; type: string; data: string };

function upload(t: TestApp, path: string, files: Part[], token: string) {
  const form = new FormData();
  for (const f of files) form.append('files', new File([f.data], f.name, { type: f.type }));
  return send(t, path, form, token);
}

function importArchive(t: TestApp, path: string, zip: Uint8Array, token: string) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(zip)], { type: 'application/zip' }), 'archive.zip');
  return send(t, path, form, token);
}

async function send(t: TestApp, path: string, form: FormData, token: string) {
  const res = await t.app.request(path, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as any) : null };
}

/** An archive of `docs` documents of `facts` facts each, their text carrying `word`. */
const archiveOf = (word: string, docs: number, facts: number) =>
  buildArchive({
    manifest: { schema_version: 1, source_bank_id: 'elsewhere', exported_at: null },
    documents: Array.from({ length: docs }, (_, d) => ({
      id: `doc-${d}`,
      facts: Array.from({ length: facts }, (_, f) => ({
        text: `Fact ${f} of document ${d} mentions ${word}.`,
        fact_type: 'world',
      })),
    })),
    loose: [],
  });

for (const engine of ENGINES) {
  describe(`new routes under attack (${engine})`, () => {
    let t: TestApp;
    let db: Db;
    let clock = Date.parse('2030-01-01T10:00:05Z');
    const keys: Record<string, string> = {};
    const key = async (project: string, name: string, scopes: string[], banks?: string[]) => {
      const r = await t.call('POST', `/v1/default/projects/${project}/keys`, {
        body: { name, scopes, ...(banks && { banks }) },
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      keys[name] = r.body.key;
    };
    /** Recall units the hostile project has spent this minute. */
    const units = async () =>
      (await t.call('GET', '/v1/default/projects/hostile')).body.usage.budgets.recall_units_per_minute ?? 0;
    /** Stores one memory in the hostile project's bank (so that it has something to export). */
    const storeOne = async (bank: string, content: string) => {
      const stored = await t.call('POST', me(bank, '/memories'), {
        token: keys.hostile,
        body: { items: [{ content }] },
      });
      assert.equal(stored.status, 200, JSON.stringify(stored.body));
    };
    const setLimits = async (project: string, limits: Record<string, number | null>) => {
      const r = await t.call('PATCH', `/v1/default/projects/${project}`, { body: { limits } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    };
    const operations = async (project: string, bank: string) =>
      (
        await db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM operations WHERE project_id = $1 AND bank_id = $2',
          [project, bank],
        )
      )[0]!.n;

    before(async () => {
      ({ db } = await openTestDb(engine));
      t = await testApp(engine, {
        store: storeOver(db),
        masterKey: newMasterKey(),
        now: () => new Date(clock),
      });
      for (const p of ['hostile', 'victim']) {
        const r = await t.call('POST', '/v1/default/projects', { body: { id: p, name: p } });
        assert.equal(r.status, 201, JSON.stringify(r.body));
      }
      await key('hostile', 'hostile', ['retain', 'recall', 'admin']);
      await key('victim', 'victim', ['retain', 'recall', 'admin']);
      await key('victim', 'reader', ['recall']);
      await key('victim', 'bankA', ['retain', 'recall'], ['a']);
    });
    // The app closes the store it was given (and with it the database).
    after(() => t.close());

    test('a project with its character budget spent gets 429 before its files or archives are read', async () => {
      clock += 60_000;
      await setLimits('hostile', { characters_per_minute: 100 });
      const spent = await t.call('POST', me('spent', '/memories'), {
        token: keys.hostile,
        body: { items: [{ content: 'x'.repeat(100) }] },
      });
      assert.equal(spent.status, 200, JSON.stringify(spent.body));
      // A file pdf.js would work on (and refuse): a 400 would mean it was parsed first.
      const r = await upload(
        t,
        me('spent', '/files/retain'),
        [{ name: 'broken.pdf', type: 'application/pdf', data: `%PDF-1.7\n${'1 0 obj << >> '.repeat(50)}` }],
        keys.hostile!,
      );
      assert.equal(r.status, 429, JSON.stringify(r.body));
      assert.equal(r.body.error.limit, 'characters_per_minute');
      // Likewise an archive: a 400 (not a ZIP) would mean it was inflated and read first.
      const imp = await importArchive(t, me('spent', '/document-transfer'), randomBytes(4096), keys.hostile!);
      assert.equal(imp.status, 429, JSON.stringify(imp.body));
      await setLimits('hostile', { characters_per_minute: null });
    });

    test('an export is charged recall units before it is queued: a spent budget is a 429', async () => {
      clock += 60_000;
      await setLimits('hostile', { recall_units_per_minute: 2 });
      const recall = await t.call('POST', me('spent', '/memories/recall'), {
        token: keys.hostile,
        body: { query: 'anything' },
      });
      assert.equal(recall.status, 200, JSON.stringify(recall.body));
      const r = await t.call('POST', me('spent', '/document-transfer/export'), { token: keys.hostile });
      assert.equal(r.status, 429, JSON.stringify(r.body));
      assert.equal(r.body.error.limit, 'recall_units_per_minute');
      await setLimits('hostile', { recall_units_per_minute: null });
    });

    test('an export refused because another of the bank is queued keeps no charge', async () => {
      clock += 60_000;
      await setLimits('hostile', { recall_units_per_minute: 10 });
      await storeOne('exporting', 'Ottoline keeps the ledger.');
      const exportIt = () =>
        t.call('POST', me('exporting', '/document-transfer/export'), { token: keys.hostile });
      const first = await exportIt();
      assert.equal(first.status, 202, JSON.stringify(first.body));
      const charged = await units();
      assert.equal(charged, 1);
      // No worker runs here: the first stays queued, so every further one is refused, uncharged.
      for (let i = 0; i < 3; i++) {
        const again = await exportIt();
        assert.equal(again.status, 429, JSON.stringify(again.body));
        assert.equal(again.body.error.limit, 'exports_per_bank');
      }
      assert.equal(await units(), charged);
      await setLimits('hostile', { recall_units_per_minute: null });
    });

    test('exports of a bank at the same instant: the ones refused as queued keep no charge', async () => {
      clock += 60_000;
      await setLimits('hostile', { recall_units_per_minute: 100 });
      await storeOne('racing', 'Philippa counts the lanterns.');
      // All at once: several pass the first look at the queue before any is queued, and are
      // charged; the queueing refuses all but one, and those must get their charge back.
      const burst = await Promise.all(
        Array.from({ length: 6 }, () =>
          t.call('POST', me('racing', '/document-transfer/export'), { token: keys.hostile }),
        ),
      );
      assert.deepEqual(
        burst.map((r) => r.status).sort(),
        [202, 429, 429, 429, 429, 429],
        JSON.stringify(burst.map((r) => r.body)),
      );
      for (const r of burst.filter((x) => x.status === 429))
        assert.equal(r.body.error.limit, 'exports_per_bank');
      assert.equal(await units(), 1);
      await setLimits('hostile', { recall_units_per_minute: null });
    });

    test('an upload over the budget is refused whole: no file of it queued, nothing charged', async () => {
      clock += 60_000;
      await setLimits('hostile', { characters_per_minute: 1000 });
      const twoFiles = () =>
        upload(
          t,
          me('partial', '/files/retain'),
          [
            { name: 'one.txt', type: 'text/plain', data: `one ${'a'.repeat(600)}` },
            { name: 'two.txt', type: 'text/plain', data: `two ${'b'.repeat(600)}` },
          ],
          keys.hostile!,
        );
      const r = await twoFiles();
      assert.equal(r.status, 429, JSON.stringify(r.body));
      assert.equal(await operations('hostile', 'partial'), 0);
      const usage = (await t.call('GET', '/v1/default/projects/hostile')).body.usage.budgets;
      assert.equal(usage.characters_per_minute, 0, JSON.stringify(usage));
      // Within the budget, the same upload is queued whole.
      await setLimits('hostile', { characters_per_minute: 2000 });
      const ok = await twoFiles();
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(await operations('hostile', 'partial'), 2);
      await setLimits('hostile', { characters_per_minute: null });
    });

    test('keys without the scope, of another bank or of another project reach none of the new routes', async () => {
      const r = await t.call('POST', me('a', '/memories'), {
        token: keys.victim,
        body: {
          items: [{ content: 'Ottoline keeps the ledger in the blue drawer.', document_id: 'ledger' }],
        },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      await t.call('POST', me('b', '/memories'), {
        token: keys.victim,
        body: { items: [{ content: 'Bank b holds the spare key.', document_id: 'spare' }] },
      });
      const memory = (await t.call('GET', me('a', '/memories'), { token: keys.victim })).body.items[0].id;
      const queued = await operations('victim', 'b');
      const invalidate = (token: string) =>
        t.call('PATCH', me('a', `/memories/${memory}`), { token, body: { state: 'invalidated' } });
      const file: Part[] = [{ name: 'n.txt', type: 'text/plain', data: 'a note' }];
      const zip = archiveOf('nothing', 1, 1);
      const writes: [string, () => Promise<{ status: number; body: any }>][] = [
        ['files/retain', () => upload(t, me('a', '/files/retain'), file, keys.reader!)],
        ['import', () => importArchive(t, me('a', '/document-transfer'), zip, keys.reader!)],
        ['reprocess', () => t.call('POST', me('a', '/documents/ledger/reprocess'), { token: keys.reader })],
        ['curation', () => invalidate(keys.reader!)],
        [
          'observations',
          () => t.call('DELETE', me('a', `/memories/${memory}/observations`), { token: keys.reader }),
        ],
      ];
      for (const [what, call] of writes) assert.equal((await call()).status, 403, `recall-only key: ${what}`);
      // A key limited to bank a, on bank b.
      const other: [string, () => Promise<{ status: number; body: any }>][] = [
        ['files/retain', () => upload(t, me('b', '/files/retain'), file, keys.bankA!)],
        ['import', () => importArchive(t, me('b', '/document-transfer'), zip, keys.bankA!)],
        ['export', () => t.call('POST', me('b', '/document-transfer/export'), { token: keys.bankA })],
        ['reprocess', () => t.call('POST', me('b', '/documents/spare/reprocess'), { token: keys.bankA })],
      ];
      for (const [what, call] of other) {
        const s = (await call()).status;
        assert.ok(s === 403 || s === 404, `bank-a key on bank b: ${what} answered ${s}`);
      }
      // Another project's key: the victim's bank and its document are not there.
      for (const [what, call] of [
        ['reprocess', () => t.call('POST', me('a', '/documents/ledger/reprocess'), { token: keys.hostile })],
        ['curation', () => invalidate(keys.hostile!)],
      ] as const) {
        const s = (await call()).status;
        assert.equal(s, 404, `other project's key: ${what} answered ${s}`);
      }
      // The victim's memory is untouched by all of that.
      const after = (await t.call('GET', me('a', '/memories'), { token: keys.victim })).body.items;
      assert.deepEqual(
        after.map((m: any) => m.state ?? 'valid'),
        ['valid'],
      );
      assert.equal(await operations('victim', 'b'), queued);
    });

    test('a reprocess queued before its document is deleted does not bring the document back', async () => {
      const word = canary('forgotten');
      const bank = `/v1/default/banks/forget`;
      const r = await t.call('POST', `${bank}/memories`, {
        body: { items: [{ content: `The ${word} was burnt in the stove.`, document_id: 'letter' }] },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const rp = await t.call('POST', `${bank}/documents/letter/reprocess`);
      assert.equal(rp.status, 200, JSON.stringify(rp.body));
      const del = await t.call('DELETE', `${bank}/documents/letter`);
      assert.equal(del.status, 200, JSON.stringify(del.body));
      // The worker (this app runs none) takes the queued reprocess only now.
      const w = await t.reconfigured({ runWorker: true });
      const op = await until(
        () => w.call('GET', `${bank}/operations/${rp.body.operation_id}`),
        (o) => !['pending', 'processing'].includes(o.body?.status),
      );
      assert.equal(op.body.status, 'completed', JSON.stringify(op.body));
      const left = (await w.call('GET', `${bank}/memories?limit=100`)).body.items;
      assert.deepEqual(
        left.filter((m: any) => m.text.includes(word)).map((m: any) => m.text),
        [],
        'the deleted text is back',
      );
      assert.equal((await w.call('GET', `${bank}/documents/letter`)).status, 404);
    });

    test('two reprocesses of one document of many slices, queued together, leave it whole once', async () => {
      // Two workers, as two mnemo processes run: each may claim one of the two operations.
      const bank = `/v1/default/banks/twice`;
      const items = Array.from({ length: 60 }, (_, i) => ({ content: `Line ${i} of the long ledger.` }));
      const r = await t.call('POST', `${bank}/memories`, { body: { items, document_id: 'ledger' } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const texts = async (app: TestApp) =>
        ((await app.call('GET', `${bank}/memories?document_id=ledger&limit=500`)).body.items as any[])
          .map((m) => m.text as string)
          .sort();
      const before = await texts(t);
      const ops = [];
      for (let i = 0; i < 2; i++) {
        const rp = await t.call('POST', `${bank}/documents/ledger/reprocess`);
        assert.equal(rp.status, 200, JSON.stringify(rp.body));
        ops.push(rp.body.operation_id as string);
      }
      const w = await t.reconfigured({ runWorker: true });
      await t.reconfigured({ runWorker: true });
      for (const id of ops) {
        const op = await until(
          () => w.call('GET', `${bank}/operations/${id}`),
          (o) => !['pending', 'processing'].includes(o.body?.status),
        );
        assert.equal(op.body.status, 'completed', JSON.stringify(op.body));
      }
      assert.deepEqual(await texts(w), before);
    });

    test('an encrypted bank: queued imports, uploads and curation hold its text in no row', async () => {
      const word = canary('import');
      const fileWord = canary('file');
      const vault = 'vault';
      assert.equal((await t.call('PUT', `/v1/default/banks/${vault}`, {})).status, 200);
      const enc = await t.call('PATCH', `/v1/default/banks/${vault}/config`, {
        body: { updates: { encryption: 'managed' } },
      });
      assert.equal(enc.status, 200, JSON.stringify(enc.body));
      const imp = await importArchive(
        t,
        `/v1/default/banks/${vault}/document-transfer`,
        archiveOf(word, 3, 2),
        ADMIN,
      );
      assert.equal(imp.status, 202, JSON.stringify(imp.body));
      const up = await upload(
        t,
        `/v1/default/banks/${vault}/files/retain`,
        [
          { name: 'page.html', type: 'text/html', data: `<p>The ${fileWord} is under the stairs.</p>` },
          { name: 'notes.md', type: 'text/markdown', data: `# ${fileWord}\n\nSecond copy.` },
        ],
        ADMIN,
      );
      assert.equal(up.status, 200, JSON.stringify(up.body));
      // Curation of its memories: new text, context and entities, then an invalidation's reason.
      const editWord = canary('edit');
      const retained = await t.call('POST', `/v1/default/banks/${vault}/memories`, {
        body: { items: [{ content: 'The kettle is on the hob.' }] },
      });
      assert.equal(retained.status, 200, JSON.stringify(retained.body));
      const id = (await t.call('GET', `/v1/default/banks/${vault}/memories?limit=100`)).body.items.find(
        (m: any) => m.text === 'The kettle is on the hob.',
      ).id;
      for (const body of [
        {
          text: `The ${editWord} kettle is on the hob.`,
          context: `${editWord} kitchen`,
          entities: [editWord],
        },
        { state: 'invalidated', reason: `${editWord} was wrong` },
      ]) {
        const r = await t.call('PATCH', `/v1/default/banks/${vault}/memories/${id}`, { body });
        assert.equal(r.status, 200, JSON.stringify(r.body));
      }
      const tables = await db.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
      );
      for (const { table_name } of tables) {
        const rows = await db.query<{ row: string | null }>(
          `SELECT string_agg(to_jsonb(x)::text, ' ') AS row FROM "${table_name}" x`,
        );
        const text = rows[0]?.row ?? '';
        for (const w of [word, fileWord, editWord])
          assert.ok(!text.includes(w), `${table_name} holds ${w} of an encrypted bank in clear`);
      }
    });
  });

  describe(`two instances at once (${engine})`, () => {
    let t: TestApp;
    let u: TestApp;
    let db: Db;
    before(async () => {
      ({ db } = await openTestDb(engine));
      t = await testApp(engine, { store: storeOver(db), runWorker: true });
      u = await t.reconfigured({ runWorker: true });
    });
    after(() => t.close());
    const finished = (bank: string, id: string) =>
      until(
        () => t.call('GET', `/v1/default/banks/${bank}/operations/${id}`),
        (o) => ['completed', 'failed'].includes(o.body?.status),
      );

    test('concurrent edits of one memory on two instances: each applied or refused, none lost or half-made', async () => {
      const bank = '/v1/default/banks/edits';
      const r = await t.call('POST', `${bank}/memories`, {
        body: { items: [{ content: 'The gate is green.' }] },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const id = (await t.call('GET', `${bank}/memories`)).body.items[0].id as string;
      const colours = ['red', 'blue', 'amber', 'white', 'black', 'grey', 'teal', 'ochre'];
      const answers = await Promise.all(
        colours.map((c, i) =>
          (i % 2 ? t : u).call('PATCH', `${bank}/memories/${id}`, {
            body: { text: `The gate is ${c}.`, entities: [`${c} gate`] },
          }),
        ),
      );
      for (const a of answers) assert.ok(a.status === 200 || a.status === 409, JSON.stringify(a.body));
      const applied = answers.filter((a) => a.status === 200).length;
      assert.ok(applied >= 1);
      const m = (await t.call('GET', `${bank}/memories/${id}`)).body;
      const colour = /^The gate is (\w+)\.$/.exec(m.text)?.[1];
      assert.ok(colour && colours.includes(colour), m.text);
      // The text and the entities are of the same edit.
      assert.deepEqual(m.entities, [`${colour} gate`]);
      const history = (await t.call('GET', `${bank}/memories/${id}/history`)).body.history as any[];
      assert.equal(history.filter((e) => e.event === 'edited').length, applied);
    });

    test('repeated exports: one of a bank queued at a time, and a bank keeps its 5 newest archives', async () => {
      const bank = 'exports';
      const r = await t.call('POST', `/v1/default/banks/${bank}/memories`, {
        body: { items: [{ content: 'Perpetua waters the ferns on Thursdays.', document_id: 'ferns' }] },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const exportOn = (app: TestApp) =>
        app.call('POST', `/v1/default/banks/${bank}/document-transfer/export`);
      // Many at once on two instances: one is queued, the others are told to retry.
      const burst = await Promise.all([t, u, t, u, t, u].map(exportOn));
      const queued = burst.filter((x) => x.status === 202);
      assert.equal(queued.length, 1, JSON.stringify(burst.map((x) => x.body)));
      for (const x of burst.filter((b) => b.status !== 202)) {
        assert.equal(x.status, 429, JSON.stringify(x.body));
        assert.equal(x.body.error.limit, 'exports_per_bank');
        assert.ok(Number(x.headers.get('retry-after')) >= 1);
      }
      const urls: string[] = [];
      await finished(bank, queued[0]!.body.operation_id);
      for (let i = 0; i < 6; i++) {
        const q = await exportOn(i % 2 ? t : u);
        assert.equal(q.status, 202, JSON.stringify(q.body));
        const done = await finished(bank, q.body.operation_id);
        assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
        urls.push(done.body.result_metadata.download_url);
      }
      const kept = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM transfer_archives WHERE bank_id = $1',
        [bank],
      );
      assert.equal(kept[0]!.n, 5);
      const status = async (url: string) =>
        (await t.app.request(url, { headers: { authorization: `Bearer ${ADMIN}` } })).status;
      assert.equal(await status(urls[5]!), 200);
      assert.equal(await status(urls[0]!), 404);
    });

    test('each document is stored once, whoever ran first', async () => {
      const word = canary('race');
      const race = (rest: string) => `/v1/default/banks/race${rest}`;
      const zip = archiveOf(word, 4, 3);
      const [a, b] = await Promise.all([
        importArchive(t, race('/document-transfer'), zip, ADMIN),
        importArchive(u, race('/document-transfer'), zip, ADMIN),
      ]);
      for (const r of [a, b]) assert.equal(r.status, 202, JSON.stringify(r.body));
      for (const r of [a, b])
        await until(
          () => t.call('GET', race(`/operations/${r.body.operation_id}`)),
          (o) => ['completed', 'failed'].includes(o.body?.status),
        );
      const texts = (await t.call('GET', race('/memories?limit=100'))).body.items
        .filter((m: any) => !Array.isArray(m.metadata.source_memory_ids))
        .map((m: any) => m.text as string)
        .sort();
      assert.equal(texts.length, 12, JSON.stringify(texts));
      assert.equal(new Set(texts).size, 12);
    });
  });
}
