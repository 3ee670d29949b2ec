/**
 * Hindsight's document transfer: `POST .../document-transfer/export` (an operation whose
 * `result_metadata` names the download), `GET /files/download/{key}`, `POST .../document-transfer`
 * (an archive imported by an operation), and the retired synchronous `GET` (410).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { strToU8, zipSync } from 'fflate';
import { newMasterKey } from '../security/encryption-helpers.js';
import { ADMIN, bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';
import { until } from '../helpers/until.js';

const CANARY = 'zebra-canary-7f3c';

for (const engine of ENGINES) {
  describe(`document transfer (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine, { masterKey: newMasterKey(), runWorker: true });
    });
    after(() => t.close());

    const finished = (bank: string, id: string, token?: string) =>
      until(
        () => t.call('GET', bankPath(bank, `/operations/${id}`), { token }),
        (r) => ['completed', 'failed'].includes(r.body?.status),
      );
    const retain = async (bank: string, items: unknown[]) => {
      const r = await t.call('POST', bankPath(bank, '/memories'), { body: { items } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    };
    const exportOf = async (bank: string, token: string = ADMIN) => {
      const r = await t.call('POST', bankPath(bank, '/document-transfer/export'), { token });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      assert.equal(r.body.status, 'pending');
      const op = await finished(bank, r.body.operation_id, token === ADMIN ? undefined : token);
      assert.equal(op.body.status, 'completed', JSON.stringify(op.body));
      return op.body.result_metadata as Record<string, any>;
    };
    const download = (url: string, token: string = ADMIN) =>
      t.app.request(url, { headers: { authorization: `Bearer ${token}` } });
    const upload = (bank: string, zip: Uint8Array, query = '', token: string = ADMIN) => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(zip)], { type: 'application/zip' }), 'archive.zip');
      return t.app.request(bankPath(bank, `/document-transfer${query}`), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body: form,
      });
    };
    const memories = async (bank: string) =>
      (await t.call('GET', bankPath(bank, '/memories?limit=100'))).body.items
        // Consolidation's observations are derived: each bank makes its own (never carried).
        .filter((m: any) => !Array.isArray(m.metadata.source_memory_ids))
        .map((m: any) => ({
          text: m.text,
          type: m.type,
          context: m.context,
          tags: m.tags,
          metadata: m.metadata,
          document_id: m.document_id,
          mentioned_at: m.mentioned_at,
          occurred_start: m.occurred_start,
          occurred_end: m.occurred_end,
          entities: [...m.entities].sort(),
        }))
        .sort((a: any, b: any) => a.text.localeCompare(b.text));

    test('export, download and import into a new bank give the same documents and memories', async () => {
      await retain('src', [
        {
          content: 'Dana moved to Berlin in March 2021.',
          document_id: 'doc-1',
          context: 'chat',
          tags: ['travel'],
          metadata: { source: 'slack', n: 3 },
          timestamp: '2024-01-02T03:04:05.000Z',
          entities: [{ text: 'Dana', type: 'PERSON' }],
        },
        { content: 'Dana prefers tea over coffee.', document_id: 'doc-1', fact_type: 'preference' },
        { content: 'The office opens at nine.', document_id: 'doc-2' },
        { content: 'A memory without a document.' },
      ]);
      const meta = await exportOf('src');
      assert.match(meta.storage_key, /^[A-Za-z0-9_-]+\.[0-9a-f]{64}\.zip$/);
      assert.equal(meta.download_url, `/v1/default/files/download/${meta.storage_key}`);
      assert.equal(meta.document_count, 2);
      assert.equal(meta.fact_count, 4);
      const res = await download(meta.download_url);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'application/zip');
      const zip = new Uint8Array(await res.arrayBuffer());
      assert.equal(zip.length, meta.byte_size);

      const imported = await upload('dst', zip);
      assert.equal(imported.status, 202, await imported.clone().text());
      const sub = (await imported.json()) as { operation_id: string };
      const op = await finished('dst', sub.operation_id);
      assert.equal(op.body.status, 'completed', JSON.stringify(op.body));
      assert.equal(op.body.result_metadata.documents_imported, 2);
      assert.equal(op.body.result_metadata.facts_imported, 4);
      assert.deepEqual(await memories('dst'), await memories('src'));
      const docs = async (bank: string) =>
        (await t.call('GET', bankPath(bank, '/documents'))).body.items.map((d: any) => d.id).sort();
      assert.deepEqual(await docs('dst'), ['doc-1', 'doc-2']);
      const entity = (await t.call('GET', bankPath('dst', '/entities'))).body.items.find(
        (e: any) => e.name === 'Dana',
      );
      assert.equal(entity?.type, 'PERSON');

      // Again: each document is there already. skip keeps the bank as it is, new-id adds copies.
      const again = await upload('dst', zip);
      const skipped = await finished('dst', ((await again.json()) as any).operation_id);
      assert.equal(skipped.body.result_metadata.documents_skipped, 2);
      assert.equal(skipped.body.result_metadata.documents_imported, 0);
      // A memory of no document has no id to conflict on: it is stored again.
      assert.equal((await memories('dst')).length, 5);
      const copies = await upload('dst', zip, '?on_conflict=new-id');
      const copied = await finished('dst', ((await copies.json()) as any).operation_id);
      assert.equal(copied.body.result_metadata.documents_imported, 2);
      assert.equal((await memories('dst')).length, 9, 'two documents again (3 facts) and the loose one');
    });

    test('an invalidated memory is not exported: an import would bring it back as valid', async () => {
      await retain('curated', [
        { content: 'Eve keeps bees on the roof.', document_id: 'doc-c' },
        { content: 'Eve keeps goats on the roof.', document_id: 'doc-c' },
      ]);
      const listed = (await t.call('GET', bankPath('curated', '/memories?limit=10'))).body.items;
      const goats = listed.find((m: any) => m.text.includes('goats'));
      const r = await t.call('PATCH', bankPath('curated', `/memories/${goats.id}`), {
        body: { state: 'invalidated', reason: 'wrong animal' },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const meta = await exportOf('curated');
      assert.equal(meta.fact_count, 1);
      const zip = new Uint8Array(await (await download(meta.download_url)).arrayBuffer());
      const op = await finished(
        'curated-copy',
        ((await (await upload('curated-copy', zip)).json()) as any).operation_id,
      );
      assert.equal(op.body.status, 'completed', JSON.stringify(op.body));
      assert.deepEqual(
        (await memories('curated-copy')).map((m: any) => m.text),
        ['Eve keeps bees on the roof.'],
      );
    });

    test('the synchronous GET is retired: 410 naming the asynchronous export', async () => {
      const r = await t.call('GET', bankPath('src', '/document-transfer'));
      assert.equal(r.status, 410);
      assert.equal(r.body.error.code, 'gone');
      assert.match(r.body.error.message, /document-transfer\/export/);
    });

    test('a corrupt, malformed or oversized archive is a clear 4xx and stores nothing', async () => {
      const before = await t.call('GET', bankPath('bad', '/operations'));
      assert.equal(before.status, 404, 'no bank yet');
      const cases: [Uint8Array, number, RegExp][] = [
        [strToU8('this is not a zip'), 400, /ZIP cannot be read/],
        [zipSync({ 'documents/000000.json': strToU8('{}') }), 400, /manifest\.json is missing/],
        [
          zipSync({
            'manifest.json': strToU8(JSON.stringify({ schema_version: 9, source_bank_id: 'x' })),
          }),
          400,
          /schema_version 9/,
        ],
        [
          zipSync({
            'manifest.json': strToU8(JSON.stringify({ schema_version: 1, source_bank_id: 'x' })),
            'documents/000000.json': strToU8(
              JSON.stringify({ id: 'd', facts: [{ text: '', fact_type: 'world' }] }),
            ),
          }),
          400,
          /documents\[0\]\.facts\[0\]/,
        ],
        // 40 MB of zeros compress to ~40 KB: refused on its declared size, before inflating.
        [
          zipSync({
            'manifest.json': strToU8(JSON.stringify({ schema_version: 1, source_bank_id: 'x' })),
            'documents/000000.json': new Uint8Array(40 * 2 ** 20),
          }),
          413,
          /inflates to at most/,
        ],
      ];
      for (const [zip, status, message] of cases) {
        const r = await upload('bad', zip);
        const body = (await r.json()) as any;
        assert.equal(r.status, status, JSON.stringify(body));
        assert.match(body.error.message, message);
      }
      assert.equal((await t.call('GET', bankPath('bad'))).status, 404, 'nothing was created');
      const json = await t.app.request(bankPath('bad', '/document-transfer'), {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(json.status, 415, 'the archive must come as the form field file');
    });

    test('an encrypted bank’s archive is stored sealed, and opens for its download', async () => {
      assert.equal((await t.call('PUT', bankPath('enc'), { body: {} })).status, 200);
      const r = await t.call('PATCH', bankPath('enc', '/config'), {
        body: { updates: { encryption: 'managed' } },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      await retain('enc', [{ content: `The vault code word is ${CANARY}.`, document_id: 'secret' }]);
      const meta = await exportOf('enc');
      const rows = await t.raw.getArchive('default', 'enc', meta.storage_key, new Date());
      assert.ok(rows?.sealed, 'stored sealed');
      assert.ok(!Buffer.from(rows!.data).includes(Buffer.from(CANARY)), 'no plaintext at rest');
      const { unzipSync, strFromU8 } = await import('fflate');
      // Neither the stored bytes nor anything inflated from them: they are not a ZIP.
      assert.throws(() => unzipSync(rows!.data));
      const res = await download(meta.download_url);
      assert.equal(res.status, 200);
      const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
      assert.match(strFromU8(files['documents/000000.json']!), new RegExp(CANARY));
    });

    test('switching a bank’s encryption deletes its archives: none written before stays plain', async () => {
      const secret = 'okapi-canary-2b9d';
      await retain('turn', [{ content: `The alarm word is ${secret}.`, document_id: 'turn-doc' }]);
      const meta = await exportOf('turn');
      /** Whether the archive is still stored, and whether its bytes at rest inflate to the secret. */
      const holding = async () => {
        const at = await t.raw.getArchive('default', 'turn', meta.storage_key, new Date());
        const { unzipSync, strFromU8 } = await import('fflate');
        const inflated =
          at && !at.sealed
            ? Object.values(unzipSync(at.data))
                .map((f) => strFromU8(f))
                .join('\n')
            : '';
        return { archive: at !== null, plainArchiveHoldsIt: inflated.includes(secret) };
      };
      assert.deepEqual(await holding(), { archive: true, plainArchiveHoldsIt: true });
      const on = await t.call('PATCH', bankPath('turn', '/config'), {
        body: { updates: { encryption: 'managed' } },
      });
      assert.equal(on.status, 200, JSON.stringify(on.body));
      // Gone with the change itself, before any conversion ran: no plain copy waits for its expiry.
      assert.deepEqual(await holding(), { archive: false, plainArchiveHoldsIt: false });
      assert.equal((await download(meta.download_url)).status, 404);
      // A new export is sealed; switching off deletes it too (its key is the old form's).
      const sealed = await exportOf('turn');
      assert.ok((await t.raw.getArchive('default', 'turn', sealed.storage_key, new Date()))?.sealed);
      const off = await t.call('PATCH', bankPath('turn', '/config'), {
        body: { updates: { encryption: 'none' } },
      });
      assert.equal(off.status, 200, JSON.stringify(off.body));
      assert.equal(await t.raw.getArchive('default', 'turn', sealed.storage_key, new Date()), null);
      // A change of another setting keeps them.
      const kept = await exportOf('turn');
      const other = await t.call('PATCH', bankPath('turn', '/config'), {
        body: { updates: { recall_default_budget: 'low' } },
      });
      assert.equal(other.status, 200, JSON.stringify(other.body));
      assert.ok(await t.raw.getArchive('default', 'turn', kept.storage_key, new Date()));
    });

    test('an archive sealed for one form is not stored after the bank switched to the other', async () => {
      assert.equal((await t.call('PUT', bankPath('race'), { body: {} })).status, 200);
      const archive = {
        key: 'race.k',
        operation_id: '00000000-0000-4000-8000-000000000001',
        filename: 'race.zip',
        byte_size: 3,
        data: new Uint8Array([1, 2, 3]),
        expires_at: new Date(Date.now() + 60_000),
      };
      // Prepared plain, written after the switch to managed (under the store's layers).
      const on = await t.call('PATCH', bankPath('race', '/config'), {
        body: { updates: { encryption: 'managed' } },
      });
      assert.equal(on.status, 200, JSON.stringify(on.body));
      await assert.rejects(t.raw.saveArchive('default', 'race', { ...archive, sealed: false }), /encryption/);
      assert.equal(await t.raw.getArchive('default', 'race', 'race.k', new Date()), null);
      assert.equal(await t.raw.saveArchive('default', 'race', { ...archive, sealed: true }), true);
    });

    test('only a key of the bank’s project and banks downloads its archive', async () => {
      await retain('alice', [{ content: 'Alice likes jazz.', document_id: 'a' }]);
      const meta = await exportOf('alice');
      const mint = async (project: string, banks?: string[]) => {
        const k = await t.call('POST', `/v1/default/projects/${project}/keys`, {
          body: { name: 'k', scopes: ['recall'], ...(banks ? { banks } : {}) },
        });
        assert.equal(k.status, 201, JSON.stringify(k.body));
        return k.body.key as string;
      };
      assert.equal(
        (await t.call('POST', '/v1/default/projects', { body: { id: 'other', name: 'O' } })).status,
        201,
      );
      const aliceKey = await mint('default', ['alice']);
      const bobKey = await mint('default', ['bob']);
      const otherKey = await mint('other');
      assert.equal((await download(meta.download_url, aliceKey)).status, 200);
      assert.equal((await download(meta.download_url, bobKey)).status, 404);
      const meUrl = `/v1/me/files/download/${meta.storage_key}`;
      assert.equal((await download(meUrl, otherKey)).status, 404);
      // A guessed key: the bank's prefix with other random bits.
      const guessed = meta.storage_key.replace(/\.[0-9a-f]{64}\./, `.${'0'.repeat(64)}.`);
      assert.equal((await download(`/v1/default/files/download/${guessed}`)).status, 404);
      // Exporting needs recall; importing needs retain.
      const r = await t.call('POST', bankPath('alice', '/document-transfer/export'), { token: aliceKey });
      assert.equal(r.status, 202);
      assert.equal((await upload('alice', new Uint8Array(10), '', aliceKey)).status, 403);
    });

    test('a recall-only key that exported polls its operation and downloads the archive', async () => {
      await retain('poll', [{ content: 'Poll me: the heron nests by the mill.', document_id: 'p' }]);
      const mint = async (scopes: string[], banks?: string[]) => {
        const k = await t.call('POST', '/v1/default/projects/default/keys', {
          body: { name: 'poller', scopes, ...(banks ? { banks } : {}) },
        });
        assert.equal(k.status, 201, JSON.stringify(k.body));
        return k.body.key as string;
      };
      for (const key of [await mint(['recall']), await mint(['recall'], ['poll'])]) {
        const meta = await exportOf('poll', key);
        assert.equal((await download(meta.download_url, key)).status, 200);
        const list = await t.call('GET', bankPath('poll', '/operations'), { token: key });
        assert.equal(list.status, 200, JSON.stringify(list.body));
        assert.ok(list.body.items.some((o: { kind: string }) => o.kind === 'export_documents'));
      }
      // A retain-only key (an ingestion key) still polls what it queues: retain or recall reads
      // operations; a key with neither does not, and changing them needs retain.
      const writer = await mint(['retain']);
      const queuedRetain = await t.call('POST', bankPath('poll', '/memories'), {
        token: writer,
        body: { async: true, items: [{ content: 'Queued by a retain-only key.' }] },
      });
      assert.equal(queuedRetain.status, 200, JSON.stringify(queuedRetain.body));
      assert.equal((await finished('poll', queuedRetain.body.operation_id, writer)).body.status, 'completed');
      assert.equal((await t.call('GET', bankPath('poll', '/operations'), { token: writer })).status, 200);
      const graph = await mint(['graph:read']);
      const refused = await t.call('GET', bankPath('poll', '/operations'), { token: graph });
      assert.equal(refused.status, 403);
      assert.match(refused.body.error.message, /'retain' or 'recall'/);
      const reader = await mint(['recall']);
      const queued = await t.call('POST', bankPath('poll', '/document-transfer/export'), { token: reader });
      const id = queued.body.operation_id;
      await finished('poll', id, reader);
      assert.equal(
        (await t.call('DELETE', bankPath('poll', `/operations/${id}`), { token: reader })).status,
        403,
      );
      // A key limited to other banks does not read this bank's operations.
      const elsewhere = await mint(['recall'], ['elsewhere']);
      assert.equal(
        (await t.call('GET', bankPath('poll', `/operations/${id}`), { token: elsewhere })).status,
        404,
      );
    });

    test('deleting the bank deletes its archives, counted in the receipt', async () => {
      await retain('gone', [{ content: 'Short-lived.', document_id: 'g' }]);
      const meta = await exportOf('gone');
      const del = await t.call('DELETE', bankPath('gone'));
      assert.equal(del.status, 200);
      assert.equal(del.body.receipt.deleted.transfer_archives, 1);
      assert.equal((await download(meta.download_url)).status, 404);
      assert.equal(await t.raw.getArchive('default', 'gone', meta.storage_key, new Date()), null);
    });

    test('an archive expires: no download after a day, and the sweep deletes it', async () => {
      await retain('old', [{ content: 'Yesterday’s news.', document_id: 'o' }]);
      const meta = await exportOf('old');
      const later = new Date(Date.now() + 25 * 60 * 60 * 1000);
      assert.equal(await t.raw.getArchive('default', 'old', meta.storage_key, later), null);
      assert.ok((await t.raw.deleteExpiredArchives(later)) >= 1);
      assert.equal((await download(meta.download_url)).status, 404);
    });
  });
}
