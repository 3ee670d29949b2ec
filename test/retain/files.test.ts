import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SEALED } from '../../src/store/sealed.js';
import { ADMIN, bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';
import { until } from '../helpers/until.js';
import { newMasterKey } from '../security/encryption-helpers.js';
import { minimalPdf } from '../helpers/pdf.js';

type Part = { name: string; type: string; data: Uint8Array<ArrayBuffer> | string };

async function upload(t: TestApp, bank: string, files: Part[], request?: unknown) {
  const form = new FormData();
  for (const f of files) form.append('files', new File([f.data], f.name, { type: f.type }));
  if (request !== undefined) form.append('request', JSON.stringify(request));
  const res = await t.app.request(bankPath(bank, '/files/retain'), {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}` },
    body: form,
  });
  return { status: res.status, body: (await res.json()) as any };
}

const settled = (t: TestApp, bank: string, ids: string[]) =>
  Promise.all(
    ids.map((id) =>
      until(
        () => t.call('GET', bankPath(bank, `/operations/${id}`)),
        (r) => r.body.status === 'completed' || r.body.status === 'failed',
      ),
    ),
  );

const texts = async (t: TestApp, bank: string, doc: string) =>
  (await t.call('GET', `${bankPath(bank, '/memories')}?document_id=${encodeURIComponent(doc)}&limit=100`))
    .body.items as { id: string; text: string }[];

for (const engine of ENGINES) {
  describe(`files/retain and document reprocess (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine, { runWorker: true, masterKey: newMasterKey() });
    });
    after(() => t.close());

    test('text, Markdown, HTML and PDF files are retained as documents and recalled', async () => {
      const bank = 'files';
      const r = await upload(
        t,
        bank,
        [
          { name: 'notes.txt', type: 'text/plain', data: 'Quentin keeps bees on the roof of the library.' },
          {
            name: 'plan.md',
            type: 'text/markdown',
            data: '# Plan\n\n- Rosalind repaints the red canoe in June.',
          },
          {
            name: 'page.html',
            type: 'text/html',
            data: '<html><head><style>p{color:red}</style></head><body><script>var hiddenSecret=1</script><p>Tobias &amp; Ines bake sourdough every Friday.</p></body></html>',
          },
          {
            name: 'report.pdf',
            type: 'application/pdf',
            data: minimalPdf(['Marguerite studies glaciers in Iceland.']),
          },
        ],
        { files_metadata: [{ document_id: 'bees', tags: ['home'] }, {}, { context: 'a web page' }, {}] },
      );
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.operation_ids.length, 4);
      assert.deepEqual(
        r.body.files.map((f: { document_id: string; kind: string }) => [f.document_id, f.kind]),
        [
          ['bees', 'text'],
          ['plan.md', 'markdown'],
          ['page.html', 'html'],
          ['report.pdf', 'pdf'],
        ],
      );
      const ops = await settled(t, bank, r.body.operation_ids);
      for (const op of ops) assert.equal(op.body.status, 'completed', JSON.stringify(op.body));
      const html = (await texts(t, bank, 'page.html')).map((m) => m.text).join(' ');
      assert.match(html, /Tobias & Ines bake sourdough/);
      assert.doesNotMatch(html, /hiddenSecret|color:red/);
      for (const [q, want] of [
        ['Who keeps bees?', /Quentin/],
        ['What happens to the canoe?', /Rosalind/],
        ['What does Marguerite study?', /glaciers/],
        ['Who bakes sourdough?', /Tobias/],
      ] as const) {
        const rec = await t.call('POST', bankPath(bank, '/memories/recall'), { body: { query: q } });
        assert.match(rec.body.results.map((x: { text: string }) => x.text).join('\n'), want, q);
      }
      const bees = await t.call('GET', `${bankPath(bank, '/memories')}?document_id=bees`);
      assert.deepEqual(bees.body.items[0].tags, ['home']);
    });

    test('an image or an archive is a 415, an oversized upload a 413: nothing is stored', async () => {
      const bank = 'refused';
      const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
      const zip = new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0x14, 0, 0, 0, 8, 0]);
      const ok = { name: 'fine.txt', type: 'text/plain', data: 'A fine text.' };
      for (const bad of [
        { name: 'photo.png', type: 'image/png', data: png },
        { name: 'bundle.zip', type: 'application/zip', data: zip },
        { name: 'sneaky.txt', type: 'text/plain', data: zip },
        { name: 'fake.pdf', type: 'application/pdf', data: 'not a pdf' },
      ]) {
        const r = await upload(t, bank, [ok, bad]);
        assert.equal(r.status, 415, `${bad.name}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error.code, 'unsupported_media_type');
      }
      const big = await upload(t, bank, [
        { name: 'big.txt', type: 'text/plain', data: 'x '.repeat(6 * 1024 * 1024) },
      ]);
      assert.equal(big.status, 413);
      const long = await upload(t, bank, [
        ok,
        { name: 'long.md', type: 'text/markdown', data: 'word '.repeat(250_000) },
      ]);
      assert.equal(long.status, 413, JSON.stringify(long.body));
      assert.equal(long.body.error.code, 'payload_too_large');
      const got = await t.call('GET', bankPath(bank, '/documents'));
      assert.ok(got.status === 404 || got.body.total === 0, JSON.stringify(got.body));
    });

    test('an encrypted bank keeps no readable source; forget takes the source with the document', async () => {
      const bank = 'sealed';
      assert.equal((await t.call('PUT', bankPath(bank), { body: { name: 'sealed' } })).status, 200);
      const patched = await t.call('PATCH', bankPath(bank, '/config'), {
        body: { updates: { encryption: 'managed' } },
      });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      const r = await upload(t, bank, [
        { name: 'diary.txt', type: 'text/plain', data: 'Ottilie buried the violet key.' },
      ]);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      await settled(t, bank, r.body.operation_ids);
      const raw = await t.raw.documentSource('default', bank, 'diary.txt');
      assert.ok(raw?.source?.startsWith(SEALED), 'the kept source is sealed');
      assert.doesNotMatch(raw!.source!, /Ottilie|violet/);
      const opened = await t.services.store.documentSource('default', bank, 'diary.txt');
      assert.match(opened!.source!, /Ottilie buried the violet key/);
      const del = await t.call('DELETE', bankPath(bank, '/documents/diary.txt'));
      assert.equal(del.status, 200);
      assert.equal(del.body.receipt.deleted.document_sources, 1);
      assert.equal(await t.raw.documentSource('default', bank, 'diary.txt'), null);
    });

    test('reprocess extracts a document again from its kept source and replaces its memories', async () => {
      const bank = 'again';
      const first = await t.call('POST', bankPath(bank, '/memories'), {
        body: {
          document_id: 'd1',
          items: [
            { content: 'Leopold sails to Crete.', tags: ['trip'] },
            { content: 'He packs a blue tent.' },
          ],
        },
      });
      assert.equal(first.status, 200);
      const before = await texts(t, bank, 'd1');
      const r = await t.call('POST', bankPath(bank, '/documents/d1/reprocess'));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.success, true);
      assert.equal(r.body.items_count, 2);
      assert.equal(r.body.document_id, 'd1');
      const [op] = await settled(t, bank, [r.body.operation_id]);
      assert.equal(op!.body.status, 'completed', JSON.stringify(op!.body));
      const afterwards = await texts(t, bank, 'd1');
      assert.deepEqual(afterwards.map((m) => m.text).sort(), before.map((m) => m.text).sort());
      const old = new Set(before.map((m) => m.id));
      assert.ok(
        afterwards.every((m) => !old.has(m.id)),
        'the memories were replaced',
      );
      const doc = await t.call('GET', bankPath(bank, '/documents/d1'));
      assert.equal(doc.body.memory_count, 2);
      // Appended to: no single source any more, so nothing to extract again.
      await t.call('POST', bankPath(bank, '/memories'), {
        body: { items: [{ content: 'A postcard arrives.', document_id: 'd1', update_mode: 'append' }] },
      });
      const refused = await t.call('POST', bankPath(bank, '/documents/d1/reprocess'));
      assert.equal(refused.status, 409);
      assert.equal((await t.call('POST', bankPath(bank, '/documents/nope/reprocess'))).status, 404);
    });
  });
}
