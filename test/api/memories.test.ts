import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ENGINES } from '../helpers/engines.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';

for (const engine of ENGINES) {
  describe(`memories API (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine);
    });
    after(() => t.close());

    test('retain answers the spec shape and stores every field', async () => {
      const bank = 'alice@example.com';
      const res = await t.call('POST', bankPath(bank, '/memories'), {
        body: {
          document_id: 'doc-1',
          items: [
            {
              content: 'Alice adopted a beagle named Pepper.',
              fact_type: 'experience',
              context: 'chat with Alice',
              timestamp: '2024-05-08T13:56:00Z',
              entities: [{ text: 'Pepper', type: 'ANIMAL' }],
              tags: ['pets'],
              metadata: { source: 'chat', turn: 3 },
            },
          ],
        },
      });
      assert.equal(res.status, 200);
      assert.equal(res.body.success, true);
      assert.equal(res.body.memories_created, 1);
      assert.equal(res.body.document_id, 'doc-1');
      assert.equal(res.body.memory_ids.length, 1);
      const list = await t.call('GET', bankPath(bank, '/memories'));
      assert.equal(list.status, 200);
      const m = list.body.items[0];
      assert.equal(m.text, 'Alice adopted a beagle named Pepper.');
      assert.equal(m.type, 'experience');
      assert.equal(m.context, 'chat with Alice');
      assert.equal(m.mentioned_at, '2024-05-08T13:56:00.000Z');
      assert.deepEqual(m.entities, ['Pepper']);
      assert.deepEqual(m.tags, ['pets']);
      assert.deepEqual(m.metadata, { source: 'chat', turn: 3 });
      assert.equal(m.document_id, 'doc-1');
      assert.equal(m.bank_id, bank);
      assert.ok(m.created_at);
    });

    test('ids with @, : and / round-trip through URL encoding', async () => {
      for (const bank of ['bob@example.com', 'user:42', 'team/a/b', 'ünïcödé 🧠']) {
        const r = await t.call('POST', bankPath(bank, '/memories'), {
          body: { items: [{ content: `note for ${bank}` }] },
        });
        assert.equal(r.status, 200, `${bank}: ${JSON.stringify(r.body)}`);
        const p = await t.call('GET', bankPath(bank));
        assert.equal(p.status, 200);
        assert.equal(p.body.id, bank);
        assert.equal(p.body.memory_count, 1);
        const list = await t.call('GET', bankPath(bank, '/memories'));
        assert.equal(list.body.items[0].bank_id, bank);
      }
    });

    test('recall finds the right memory and reports every score and usage', async () => {
      const bank = 'recall-basic';
      await t.call('POST', bankPath(bank, '/memories'), {
        body: {
          items: [
            { content: 'Melanie painted a sunrise over the lake last weekend.' },
            { content: 'Caroline is researching adoption agencies.' },
            { content: 'The team meeting moved to Thursday.' },
          ],
        },
      });
      const r = await t.call('POST', bankPath(bank, '/memories/recall'), {
        body: { query: 'What did Melanie paint?' },
      });
      assert.equal(r.status, 200);
      assert.equal(r.body.results[0].text, 'Melanie painted a sunrise over the lake last weekend.');
      const first = r.body.results[0];
      for (const k of [
        'id',
        'type',
        'text',
        'context',
        'occurred_start',
        'occurred_end',
        'mentioned_at',
        'entities',
        'scores',
        'tags',
        'metadata',
        'document_id',
        'chunk_id',
      ]) {
        assert.ok(k in first, `result lacks ${k}`);
      }
      for (const k of ['final', 'semantic', 'keyword']) assert.equal(typeof first.scores[k], 'number');
      assert.ok(first.scores.keyword > 0);
      assert.deepEqual(Object.keys(r.body.usage).sort(), [
        'max_tokens',
        'org_blended',
        'tokens_used',
        'truncated',
      ]);
      assert.equal(r.body.usage.max_tokens, 2048);
      assert.equal(r.body.usage.truncated, false);
      assert.equal(r.body.usage.org_blended, false);
      assert.ok(r.body.usage.tokens_used > 0);
    });

    test('max_tokens cuts at the first result that would overflow', async () => {
      const bank = 'budget';
      const items = Array.from({ length: 10 }, (_, i) => ({
        content: `Budget memory number ${i} about gardening tomatoes and basil.`,
      }));
      await t.call('POST', bankPath(bank, '/memories'), { body: { items } });
      const all = await t.call('POST', bankPath(bank, '/memories/recall'), {
        body: { query: 'gardening tomatoes' },
      });
      assert.equal(all.body.results.length, 10);
      assert.equal(all.body.usage.truncated, false);
      const perItem = all.body.usage.tokens_used / 10;
      const cut = await t.call('POST', bankPath(bank, '/memories/recall'), {
        body: { query: 'gardening tomatoes', max_tokens: Math.floor(perItem * 3.5) },
      });
      assert.equal(cut.body.results.length, 3);
      assert.equal(cut.body.usage.truncated, true);
      assert.ok(cut.body.usage.tokens_used <= Math.floor(perItem * 3.5));
      assert.equal(cut.body.usage.max_tokens, Math.floor(perItem * 3.5));
    });

    test('tags_match truth table', async () => {
      const bank = 'tags';
      const items = [
        { content: 'tagged a only apple', tags: ['a'] },
        { content: 'tagged a and b apple', tags: ['a', 'b'] },
        { content: 'tagged b only apple', tags: ['b'] },
        { content: 'tagged c only apple', tags: ['c'] },
        { content: 'untagged apple' },
      ];
      await t.call('POST', bankPath(bank, '/memories'), { body: { items } });
      const expect: Record<string, string[]> = {
        any: ['tagged a only apple', 'tagged a and b apple', 'tagged b only apple', 'untagged apple'],
        all: ['tagged a and b apple', 'untagged apple'],
        any_strict: ['tagged a only apple', 'tagged a and b apple', 'tagged b only apple'],
        all_strict: ['tagged a and b apple'],
        exact: ['tagged a and b apple'],
      };
      for (const [mode, want] of Object.entries(expect)) {
        const r = await t.call('POST', bankPath(bank, '/memories/recall'), {
          body: { query: 'apple', tags: ['a', 'b'], tags_match: mode },
        });
        assert.equal(r.status, 200);
        assert.deepEqual(r.body.results.map((x: any) => x.text).sort(), [...want].sort(), mode);
      }
      const list = await t.call('GET', bankPath(bank, '/memories?tags=a,b&tags_match=exact'));
      assert.deepEqual(
        list.body.items.map((x: any) => x.text),
        ['tagged a and b apple'],
      );
    });

    test('types, min_scores and query_timestamp filter results', async () => {
      const bank = 'filters';
      await t.call('POST', bankPath(bank, '/memories'), {
        body: {
          items: [
            {
              content: 'I prefer green tea in the morning',
              fact_type: 'preference',
              timestamp: '2024-01-01T00:00:00Z',
            },
            {
              content: 'Green tea was first grown in China',
              fact_type: 'world',
              timestamp: '2024-06-01T00:00:00Z',
            },
          ],
        },
      });
      const typed = await t.call('POST', bankPath(bank, '/memories/recall'), {
        body: { query: 'green tea', types: ['preference'] },
      });
      assert.deepEqual(
        typed.body.results.map((x: any) => x.type),
        ['preference'],
      );
      const asOf = await t.call('POST', bankPath(bank, '/memories/recall'), {
        body: { query: 'green tea', query_timestamp: '2024-03-01T00:00:00Z' },
      });
      assert.deepEqual(
        asOf.body.results.map((x: any) => x.text),
        ['I prefer green tea in the morning'],
      );
      const none = await t.call('POST', bankPath(bank, '/memories/recall'), {
        body: { query: 'green tea', min_scores: { final: 1.01 } },
      });
      assert.equal(none.body.results.length, 0);
      const kw = await t.call('POST', bankPath(bank, '/memories/recall'), {
        body: { query: 'China', min_scores: { keyword: 0.5 } },
      });
      assert.deepEqual(
        kw.body.results.map((x: any) => x.text),
        ['Green tea was first grown in China'],
      );
    });

    test('temporal_window ranks memories of that period first', async () => {
      const bank = 'window';
      await t.call('POST', bankPath(bank, '/memories'), {
        body: {
          items: [
            { content: 'We went hiking in the mountains', timestamp: '2023-07-10T10:00:00Z' },
            { content: 'We went hiking by the sea', timestamp: '2022-03-10T10:00:00Z' },
          ],
        },
      });
      for (const [start, end, want] of [
        ['2023-07-01T00:00:00Z', '2023-08-01T00:00:00Z', 'We went hiking in the mountains'],
        ['2022-03-01T00:00:00Z', '2022-04-01T00:00:00Z', 'We went hiking by the sea'],
      ]) {
        const r = await t.call('POST', bankPath(bank, '/memories/recall'), {
          body: { query: 'hiking', temporal_window: { start, end } },
        });
        assert.equal(r.body.results[0].text, want);
        assert.ok(r.body.results[0].scores.temporal > 0);
      }
    });

    test('a query over 500 tokens is 400 query_too_long', async () => {
      await t.call('POST', bankPath('long', '/memories'), { body: { items: [{ content: 'x' }] } });
      const r = await t.call('POST', bankPath('long', '/memories/recall'), {
        body: { query: 'word '.repeat(600) },
      });
      assert.equal(r.status, 400);
      assert.equal(r.body.error.code, 'query_too_long');
    });

    test('list pages with a cursor, newest first, and filters by type, document and text', async () => {
      const bank = 'paging';
      for (let i = 0; i < 5; i++) {
        await t.call('POST', bankPath(bank, '/memories'), {
          body: {
            items: [
              {
                content: `page item ${i}`,
                fact_type: i % 2 ? 'world' : 'experience',
                document_id: `d${i % 2}`,
                update_mode: 'append',
              },
            ],
          },
        });
      }
      const p1 = await t.call('GET', bankPath(bank, '/memories?limit=2'));
      assert.deepEqual(
        p1.body.items.map((x: any) => x.text),
        ['page item 4', 'page item 3'],
      );
      const p2 = await t.call('GET', bankPath(bank, `/memories?limit=2&cursor=${p1.body.next_cursor}`));
      assert.deepEqual(
        p2.body.items.map((x: any) => x.text),
        ['page item 2', 'page item 1'],
      );
      const p3 = await t.call('GET', bankPath(bank, `/memories?limit=2&cursor=${p2.body.next_cursor}`));
      assert.deepEqual(
        p3.body.items.map((x: any) => x.text),
        ['page item 0'],
      );
      assert.equal(p3.body.next_cursor, null);
      const typed = await t.call('GET', bankPath(bank, '/memories?type=world'));
      assert.equal(typed.body.items.length, 2);
      const doc = await t.call('GET', bankPath(bank, '/memories?document_id=d0'));
      assert.deepEqual(
        doc.body.items.map((x: any) => x.text),
        ['page item 4', 'page item 2', 'page item 0'],
      );
      const q = await t.call('GET', bankPath(bank, '/memories?q=item%203'));
      assert.deepEqual(
        q.body.items.map((x: any) => x.text),
        ['page item 3'],
      );
    });

    test('document replace swaps the set; append adds', async () => {
      const bank = 'docs';
      await t.call('POST', bankPath(bank, '/memories'), {
        body: { document_id: 'notes', items: [{ content: 'old one' }, { content: 'old two' }] },
      });
      await t.call('POST', bankPath(bank, '/memories'), {
        body: { document_id: 'notes', items: [{ content: 'new one' }] },
      });
      let list = await t.call('GET', bankPath(bank, '/memories'));
      assert.deepEqual(
        list.body.items.map((x: any) => x.text),
        ['new one'],
      );
      await t.call('POST', bankPath(bank, '/memories'), {
        body: { document_id: 'notes', items: [{ content: 'appended', update_mode: 'append' }] },
      });
      list = await t.call('GET', bankPath(bank, '/memories'));
      assert.deepEqual(list.body.items.map((x: any) => x.text).sort(), ['appended', 'new one']);
      const recall = await t.call('POST', bankPath(bank, '/memories/recall'), { body: { query: 'old one' } });
      assert.ok(!recall.body.results.some((x: any) => x.text.startsWith('old')));
    });

    test('delete memory answers {deleted, id, receipt}; a missing id is 404', async () => {
      const bank = 'deleting';
      const r = await t.call('POST', bankPath(bank, '/memories'), {
        body: { items: [{ content: 'to be deleted soon' }, { content: 'kept' }] },
      });
      const id = r.body.memory_ids[0];
      const d = await t.call('DELETE', bankPath(bank, `/memories/${id}`));
      assert.equal(d.status, 200);
      const { receipt, ...rest } = d.body;
      assert.deepEqual(rest, { deleted: true, id });
      assert.deepEqual(receipt.subject, { kind: 'memory', bank_id: bank, id });
      assert.equal(receipt.deleted.memories, 1);
      assert.equal((await t.call('DELETE', bankPath(bank, `/memories/${id}`))).status, 404);
      assert.equal((await t.call('DELETE', bankPath(bank, '/memories/not-a-uuid'))).status, 404);
      const rec = await t.call('POST', bankPath(bank, '/memories/recall'), {
        body: { query: 'deleted soon' },
      });
      assert.ok(!rec.body.results.some((x: any) => x.text === 'to be deleted soon'));
      assert.equal((await t.call('GET', bankPath(bank))).body.memory_count, 1);
    });

    test('reading a bank that does not exist is 404', async () => {
      for (const [method, rest] of [
        ['GET', ''],
        ['GET', '/memories'],
        ['GET', '/config'],
        ['GET', '/entities'],
        ['DELETE', ''],
      ] as const) {
        const r = await t.call(method, bankPath('nobody-here', rest));
        assert.equal(r.status, 404, `${method} ${rest}`);
        assert.equal(r.body.error.code, 'not_found');
      }
      const r = await t.call('POST', bankPath('nobody-here', '/memories/recall'), { body: { query: 'x' } });
      assert.equal(r.status, 404);
    });
  });
}
