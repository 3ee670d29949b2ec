/**
 * Browsing a bank in Hindsight's shapes: Recall's `entities` section, an entity's page, the
 * entity and memory graphs, one memory and its history, a document's chunks.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { consolidateBank } from '../../src/core/consolidate/consolidate.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

for (const engine of ENGINES) {
  describe(`graph, entities and history (${engine})`, () => {
    let t: TestApp;
    let ids: string[];
    before(async () => {
      t = await testApp(engine);
      const r = await t.call('POST', bankPath('g', '/memories'), {
        body: {
          items: [
            {
              content: 'Alice works as a nurse in Lyon',
              entities: [
                { text: 'Alice', type: 'PERSON' },
                { text: 'Lyon', type: 'PLACE' },
              ],
              document_id: 'profile',
              tags: ['work'],
            },
            {
              content: 'Alice moved to Lyon in 2020',
              entities: [
                { text: 'Alice', type: 'PERSON' },
                { text: 'Lyon', type: 'PLACE' },
              ],
              document_id: 'profile',
            },
            {
              content: 'Alice plays chess with Bob',
              entities: [
                { text: 'Alice', type: 'PERSON' },
                { text: 'Bob', type: 'PERSON' },
              ],
              document_id: 'profile',
            },
            { content: 'Bob bakes bread on Sundays', entities: [{ text: 'Bob', type: 'PERSON' }] },
          ],
        },
      });
      assert.equal(r.status, 200);
      ids = r.body.memory_ids;
    });
    after(() => t.close());

    const entityId = async (name: string) =>
      (await t.call('GET', bankPath('g', '/entities'))).body.items.find((e: any) => e.name === name)
        .id as string;

    test('Recall has an entities section by default, in the order the results mention them', async () => {
      const r = await t.call('POST', bankPath('g', '/memories/recall'), {
        body: { query: 'Where does Alice work?' },
      });
      assert.equal(r.status, 200);
      const top = r.body.results[0];
      assert.equal(top.text, 'Alice works as a nurse in Lyon');
      const names = Object.keys(r.body.entities);
      assert.deepEqual(names.slice(0, 2).sort(), ['Alice', 'Lyon']);
      const alice = r.body.entities.Alice;
      assert.equal(alice.canonical_name, 'Alice');
      assert.equal(alice.entity_id, await entityId('Alice'));
      assert.ok(alice.observations.length > 0);
      assert.ok(alice.observations.every((o: any) => /Alice/.test(o.text)));
      // Every entity of the results is there, and only those.
      const mentioned = new Set(r.body.results.flatMap((x: any) => x.entities));
      assert.deepEqual(new Set(names), mentioned);
    });

    test('include.entities: null leaves the section out; max_tokens bounds its text', async () => {
      const off = await t.call('POST', bankPath('g', '/memories/recall'), {
        body: { query: 'Alice', include: { entities: null } },
      });
      assert.equal(off.status, 200);
      assert.equal(off.body.entities, null);
      const none = await t.call('POST', bankPath('g', '/memories/recall'), {
        body: { query: 'Alice', include: { entities: { max_tokens: 0 } } },
      });
      const all = Object.values(none.body.entities) as any[];
      assert.ok(all.length > 0);
      assert.ok(all.every((e) => e.observations.length === 0));
      const some = await t.call('POST', bankPath('g', '/memories/recall'), {
        body: { query: 'Alice', include: { entities: { max_tokens: 10 } } },
      });
      const shown = (Object.values(some.body.entities) as any[]).flatMap((e) => e.observations);
      assert.ok(shown.length >= 1 && shown.length < 8, `${shown.length} observations in 10 tokens`);
      const bad = await t.call('POST', bankPath('g', '/memories/recall'), {
        body: { query: 'Alice', include: { entities: { max_tokens: -1 } } },
      });
      assert.equal(bad.status, 400);
    });

    test('the entity list: Hindsight’s total, limit, offset and canonical_name beside the cursor', async () => {
      const all = await t.call('GET', bankPath('g', '/entities'));
      assert.equal(all.status, 200);
      assert.deepEqual(
        all.body.items.map((e: any) => [e.canonical_name, e.name, e.mention_count]),
        [
          ['Alice', 'Alice', 3],
          ['Bob', 'Bob', 2],
          ['Lyon', 'Lyon', 2],
        ],
      );
      assert.equal(all.body.total, 3);
      const page = await t.call('GET', bankPath('g', '/entities?limit=1&offset=1'));
      assert.deepEqual(
        page.body.items.map((e: any) => e.name),
        ['Bob'],
      );
      assert.equal(page.body.limit, 1);
      assert.equal(page.body.offset, 1);
      assert.equal(page.body.total, 3);
      const next = await t.call('GET', bankPath('g', `/entities?limit=2&cursor=${page.body.next_cursor}`));
      assert.deepEqual(
        next.body.items.map((e: any) => e.name),
        ['Lyon'],
      );
    });

    test('an entity’s page: the entity and the memories that mention it', async () => {
      const id = await entityId('Bob');
      const r = await t.call('GET', bankPath('g', `/entities/${id}`));
      assert.equal(r.status, 200);
      assert.equal(r.body.id, id);
      assert.equal(r.body.canonical_name, 'Bob');
      assert.equal(r.body.type, 'PERSON');
      assert.equal(r.body.mention_count, 2);
      assert.deepEqual(r.body.observations.map((o: any) => o.text).sort(), [
        'Alice plays chess with Bob',
        'Bob bakes bread on Sundays',
      ]);
      assert.equal((await t.call('GET', bankPath('g', `/entities/${randomUUID()}`))).status, 404);
      assert.equal((await t.call('GET', bankPath('g', '/entities/not-a-uuid'))).status, 404);
      assert.equal((await t.call('GET', bankPath('nobank', `/entities/${id}`))).status, 404);
    });

    test('entity graph: pairs mentioned together, most often first, with min_count', async () => {
      const [alice, lyon, bob] = [await entityId('Alice'), await entityId('Lyon'), await entityId('Bob')];
      const r = await t.call('GET', bankPath('g', '/entities/graph'));
      assert.equal(r.status, 200);
      const pair = (e: any) => [e.data.source, e.data.target].sort().join();
      assert.deepEqual(
        r.body.edges.map((e: any) => [pair(e), e.data.weight]),
        [
          [[alice, lyon].sort().join(), 2],
          [[alice, bob].sort().join(), 1],
        ],
      );
      assert.equal(r.body.total_edges, 2);
      assert.equal(r.body.total_entities, 3);
      assert.deepEqual(r.body.nodes.map((n: any) => n.data.label).sort(), ['Alice', 'Bob', 'Lyon']);
      assert.equal(r.body.nodes.find((n: any) => n.data.id === alice).data.mentionCount, 3);
      const strong = await t.call('GET', bankPath('g', '/entities/graph?min_count=2'));
      assert.equal(strong.body.edges.length, 1);
      assert.equal(strong.body.total_edges, 1);
      assert.deepEqual(strong.body.nodes.map((n: any) => n.data.label).sort(), ['Alice', 'Lyon']);
      const one = await t.call('GET', bankPath('g', '/entities/graph?limit=1'));
      assert.equal(one.body.edges.length, 1);
      assert.equal(one.body.total_edges, 2);
      assert.equal(one.body.limit, 1);
    });

    test('memory graph: memories as nodes, shared entities as edges, a table row each', async () => {
      const r = await t.call('GET', bankPath('g', '/graph'));
      assert.equal(r.status, 200);
      assert.equal(r.body.total_units, 4);
      assert.deepEqual(new Set(r.body.nodes.map((n: any) => n.id)), new Set(ids));
      const edge = (a: number, b: number) =>
        r.body.edges.find(
          (e: any) => [e.from, e.to].sort().join() === [ids[a], ids[b]].sort().join() && e.type === 'entity',
        );
      assert.equal(edge(0, 1)?.weight, 2, 'Alice and Lyon');
      assert.equal(edge(0, 2)?.weight, 1, 'Alice');
      assert.equal(edge(2, 3)?.weight, 1, 'Bob');
      assert.equal(edge(0, 3), undefined);
      const row = r.body.table_rows.find((x: any) => x.id === ids[0]);
      assert.equal(row.entities, 'Alice, Lyon');
      assert.equal(row.text, 'Alice works as a nurse in Lyon');
      const filtered = await t.call('GET', bankPath('g', '/graph?document_id=profile&limit=2'));
      assert.equal(filtered.body.total_units, 3);
      assert.equal(filtered.body.nodes.length, 2);
      const tagged = await t.call('GET', bankPath('g', '/graph?tags=work&tags_match=all_strict'));
      assert.deepEqual(
        tagged.body.nodes.map((n: any) => n.id),
        [ids[0]],
      );
    });

    test('a memory, and its history through consolidation', async () => {
      const got = await t.call('GET', bankPath('g', `/memories/${ids[3]}`));
      assert.equal(got.status, 200);
      assert.equal(got.body.text, 'Bob bakes bread on Sundays');
      assert.deepEqual(got.body.entities, ['Bob']);
      assert.equal((await t.call('GET', bankPath('g', `/memories/${randomUUID()}`))).status, 404);
      assert.equal((await t.call('GET', bankPath('g', '/memories/nope'))).status, 404);
      // `list` is still the listing, not a memory id.
      assert.ok(Array.isArray((await t.call('GET', bankPath('g', '/memories/list'))).body.items));

      const plain = await t.call('GET', bankPath('g', `/memories/${ids[3]}/history`));
      assert.equal(plain.status, 200);
      assert.deepEqual(
        plain.body.history.map((e: any) => e.event),
        ['retained'],
      );
      // Two memories saying the same thing consolidate into one observation backed by both.
      const twin = await t.call('POST', bankPath('h', '/memories'), {
        body: {
          items: [
            { content: 'Carol drinks green tea every morning.' },
            { content: 'Carol drinks green tea every morning.' },
          ],
        },
      });
      await consolidateBank(t.services, 'default', 'h');
      const obs = (await t.call('GET', bankPath('h', '/memories?type=observation'))).body.items[0];
      assert.ok(obs, 'consolidation wrote an observation');
      const h = await t.call('GET', bankPath('h', `/memories/${obs.id}/history`));
      assert.equal(h.body.type, 'observation');
      assert.equal(h.body.history[0].event, 'consolidated');
      const sources = h.body.history.filter((e: any) => e.event === 'source_added');
      assert.deepEqual(sources.map((e: any) => e.memory_id).sort(), [...twin.body.memory_ids].sort());
      assert.ok(sources.every((e: any) => e.relation === 'supports' && /green tea/.test(e.text)));
      const src = await t.call('GET', bankPath('h', `/memories/${twin.body.memory_ids[0]}/history`));
      assert.deepEqual(
        src.body.history.map((e: any) => [e.event, e.memory_id ?? null]),
        [
          ['retained', null],
          ['consolidated_into', obs.id],
        ],
      );
      const times = src.body.history.map((e: any) => Date.parse(e.at));
      assert.deepEqual(
        times,
        [...times].sort((a, b) => a - b),
      );
    });

    test('a document’s chunks in retained order, offset-paged', async () => {
      const all = await t.call('GET', bankPath('g', '/documents/profile/chunks'));
      assert.equal(all.status, 200);
      assert.deepEqual(
        all.body.items.map((c: any) => [c.chunk_index, c.chunk_text]),
        [
          [0, 'Alice works as a nurse in Lyon'],
          [1, 'Alice moved to Lyon in 2020'],
          [2, 'Alice plays chess with Bob'],
        ],
      );
      assert.equal(all.body.total, 3);
      assert.equal(all.body.items[0].chunk_id, ids[0]);
      assert.equal(all.body.items[0].document_id, 'profile');
      assert.equal(all.body.items[0].bank_id, 'g');
      const page = await t.call('GET', bankPath('g', '/documents/profile/chunks?limit=1&offset=1'));
      assert.deepEqual(
        page.body.items.map((c: any) => [c.chunk_index, c.chunk_text]),
        [[1, 'Alice moved to Lyon in 2020']],
      );
      const past = await t.call('GET', bankPath('g', '/documents/profile/chunks?offset=5'));
      assert.deepEqual(past.body.items, []);
      assert.equal((await t.call('GET', bankPath('g', '/documents/missing/chunks'))).status, 404);
    });

    test('the graph routes need graph:read on /v1/me; memories and chunks need recall', async () => {
      const key = async (scopes: string[]) =>
        (await t.call('POST', '/v1/default/projects/default/keys', { body: { name: scopes.join(), scopes } }))
          .body.key;
      const recallOnly = await key(['recall']);
      const alice = await entityId('Alice');
      for (const path of ['/graph', '/entities/graph', `/entities/${alice}`]) {
        const r = await t.call('GET', bankPath('g', path, '/v1/me'), { token: recallOnly });
        assert.equal(r.status, 403, path);
        assert.equal(r.body.error.required_scope, 'graph:read');
      }
      for (const path of [`/memories/${ids[0]}`, `/memories/${ids[0]}/history`, '/documents/profile/chunks'])
        assert.equal(
          (await t.call('GET', bankPath('g', path, '/v1/me'), { token: recallOnly })).status,
          200,
          path,
        );
      const graphKey = await key(['graph:read']);
      assert.equal(
        (await t.call('GET', bankPath('g', '/entities/graph', '/v1/me'), { token: graphKey })).status,
        200,
      );
    });
  });
}
