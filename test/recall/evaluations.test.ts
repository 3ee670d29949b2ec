/**
 * Recall evaluations: the figures of a run equal what `/recall` answers for the same queries,
 * computed here on their own; a run is kept, listed, shown, rerun by id and deleted (admin
 * only); bad requests are 400s and store nothing; runs go with their bank.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { analyzeQuery } from '../../src/core/recall/query.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

const BANK = 'eval@example.com';
const NOW = '2023-06-01T12:00:00Z';

const ITEMS = [
  {
    entities: [{ text: 'Caroline', type: 'PERSON' }],
    content: 'Caroline went to an LGBTQ support group meeting.',
    timestamp: '2023-05-08T13:56:00Z',
  },
  {
    entities: [{ text: 'Melanie', type: 'PERSON' }],
    content: 'Melanie painted a sunrise over the lake.',
    timestamp: '2023-05-25T10:00:00Z',
  },
  {
    entities: [{ text: 'Caroline', type: 'PERSON' }],
    content: 'Caroline started a pottery class on Tuesdays.',
    timestamp: '2023-05-25T10:01:00Z',
  },
  {
    entities: [{ text: 'Melanie', type: 'PERSON' }],
    content: 'Melanie ran a charity race for mental health.',
    timestamp: '2023-05-31T09:00:00Z',
  },
  {
    entities: [{ text: 'Caroline', type: 'PERSON' }],
    content: 'Caroline wants to study counseling and adoption.',
    timestamp: '2023-04-02T09:00:00Z',
  },
  { content: 'The camping trip to the mountains was rained out.', timestamp: '2022-08-14T09:00:00Z' },
  {
    entities: [{ text: 'Melanie', type: 'PERSON' }],
    content: 'Melanie plays the violin in a community orchestra.',
    timestamp: '2023-03-10T09:00:00Z',
  },
  {
    entities: [{ text: 'Caroline', type: 'PERSON' }],
    content: 'Caroline adopted a grey cat named Oliver.',
    timestamp: '2023-05-31T18:00:00Z',
  },
  { content: 'A new bakery opened near the train station.', timestamp: '2023-01-20T09:00:00Z' },
  {
    entities: [{ text: 'Melanie', type: 'PERSON' }],
    content: 'Melanie read a book about the history of jazz.',
    timestamp: '2023-02-11T09:00:00Z',
  },
];

/** Rank (from 1) of each expected id among the first k results, or null: written apart from core. */
function independentFigures(resultIds: string[][], expected: string[][], k: number) {
  let recall = 0;
  let rr = 0;
  const ranks: (number | null)[] = [];
  resultIds.forEach((ids, i) => {
    const top = ids.slice(0, k);
    const want = [...new Set(expected[i])];
    const hit = want.filter((id) => top.includes(id));
    recall += hit.length / want.length;
    const best = hit.length ? Math.min(...hit.map((id) => top.indexOf(id) + 1)) : null;
    ranks.push(best);
    rr += best ? 1 / best : 0;
  });
  const n = resultIds.length;
  return { recall_at_k: recall / n, mrr: rr / n, ranks };
}

const close = (a: number, b: number, what: string) =>
  assert.ok(Math.abs(a - b) < 1e-6, `${what}: ${a} vs ${b}`);

for (const engine of ENGINES) {
  describe(`recall evaluations (${engine})`, () => {
    let t: TestApp;
    const id: Record<string, string> = {};
    const path = (rest = '', base?: string) => bankPath(BANK, `/evaluations${rest}`, base);
    // Budget windows are fixed minutes: a clock of the test's own keeps a test inside one.
    let clock = Date.parse('2030-01-01T10:00:05Z');
    let cases: { query: string; expected_memory_ids: string[]; query_timestamp?: string; tags?: string[] }[];

    before(async () => {
      t = await testApp(engine, { now: () => new Date(clock) });
      const r = await t.call('POST', bankPath(BANK, '/memories'), { body: { items: ITEMS } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const list = await t.call('GET', bankPath(BANK, '/memories?limit=100'));
      for (const m of list.body.items) id[m.text] = m.id;
      const of = (i: number) => id[ITEMS[i]!.content]!;
      assert.equal(Object.keys(id).length, ITEMS.length);
      cases = [
        { query: 'What did Caroline do at the support group?', expected_memory_ids: [of(0)] },
        { query: 'What does Melanie paint?', expected_memory_ids: [of(1)] },
        { query: 'Which hobbies does Caroline have?', expected_memory_ids: [of(2), of(4), of(7)] },
        { query: 'What happened yesterday?', expected_memory_ids: [of(3), of(7)], query_timestamp: NOW },
        { query: 'Where did the bread shop open?', expected_memory_ids: [of(8)] },
        { query: 'musical instruments', expected_memory_ids: [of(6), of(9)] },
        { query: 'holiday outdoors in nature', expected_memory_ids: [of(5)] },
        // Several memories compete: the expected one need not come first, or within k.
        { query: 'What did Caroline do?', expected_memory_ids: [of(7)] },
        { query: 'What does Melanie do?', expected_memory_ids: [of(9), of(3)] },
        { query: 'sunrise painting by the lake', expected_memory_ids: [of(5)] },
      ];
    });
    after(() => t.close());

    /** What `/recall` answers for the cases, read as the evaluation reads them. */
    async function recallIds(k: number, opts: { budget?: string; max_tokens?: number } = {}) {
      const ids: string[][] = [];
      for (const c of cases) {
        const r = await t.call('POST', bankPath(BANK, '/memories/recall'), {
          body: { query: c.query, query_timestamp: c.query_timestamp, tags: c.tags, ...opts },
        });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        ids.push(r.body.results.map((x: { id: string }) => x.id));
      }
      return independentFigures(
        ids,
        cases.map((c) => c.expected_memory_ids),
        k,
      );
    }

    test('the figures of a run are those of /recall for the same queries', async () => {
      for (const [k, opts] of [
        [3, {}],
        [1, { budget: 'high' }],
        [10, { budget: 'low', max_tokens: 15 }],
      ] as const) {
        const run = await t.call('POST', path(), { body: { k, cases, ...opts } });
        assert.equal(run.status, 201, JSON.stringify(run.body));
        const want = await recallIds(k, opts);
        close(run.body.recall_at_k, want.recall_at_k, `recall@${k}`);
        close(run.body.mrr, want.mrr, `mrr@${k}`);
        assert.deepEqual(
          run.body.cases.map((c: { rank: number | null }) => c.rank),
          want.ranks,
        );
        assert.equal(run.body.k, k);
        assert.equal(run.body.case_count, cases.length);
        assert.equal(run.body.budget, opts.budget ?? 'mid');
        assert.equal(run.body.max_tokens, opts.max_tokens ?? 2048);
        // Not degenerate: some expected memories rank below the first, or beyond k.
        assert.ok(
          want.ranks.some((r) => r !== 1),
          `ranks ${JSON.stringify(want.ranks)}`,
        );
      }
    });

    test('each case says which channels found its memories; channel figures score their own lists', async () => {
      const run = await t.call('POST', path(), { body: { k: 10, cases } });
      assert.equal(run.status, 201);
      const body = run.body;
      for (const c of body.cases) {
        // The case's channels are the union of its memories' channels.
        const union = new Set(c.expected.flatMap((e: { found_by: string[] }) => e.found_by));
        assert.deepEqual(new Set(c.found_by), union);
        assert.equal(c.expected.length, c.expected_memory_ids.length);
        // A memory in the fused answer came from some channel.
        for (const e of c.expected) if (e.rank !== null) assert.ok(e.found_by.length > 0, JSON.stringify(e));
      }
      // "What happened yesterday?" shares no word with its memories: the temporal channel finds them.
      const dated = body.cases.find((c: { query: string }) => c.query === 'What happened yesterday?');
      assert.ok(dated.found_by.includes('temporal'), JSON.stringify(dated));
      assert.ok(body.channels.temporal.recall_at_k > 0);
      // "musical instruments" matches no word of its memories either: found by meaning only, if at all.
      const music = body.cases.find((c: { query: string }) => c.query === 'musical instruments');
      assert.ok(!music.found_by.includes('keyword'), JSON.stringify(music));
      // A channel's figures never exceed what its candidates hold: a case it found nothing for adds 0.
      for (const ch of ['semantic', 'keyword', 'graph', 'temporal']) {
        const f = body.channels[ch];
        assert.ok(f.recall_at_k >= 0 && f.recall_at_k <= 1 && f.mrr >= 0 && f.mrr <= 1, ch);
        const foundBy = body.cases.filter((c: { found_by: string[] }) => c.found_by.includes(ch)).length;
        if (foundBy === 0) assert.deepEqual(f, { recall_at_k: 0, mrr: 0 }, ch);
      }
      // The keyword and semantic channels' figures from their own lists, read from the store's
      // searches with the query as Recall analyses it (budget mid: 100 candidates each).
      for (const ch of ['keyword', 'semantic'] as const) {
        const lists: string[][] = [];
        for (const c of cases) {
          const at = c.query_timestamp ? new Date(c.query_timestamp) : undefined;
          const q = await analyzeQuery(t.services, c.query, at ?? new Date(), undefined);
          const filter = { tags: c.tags, mentionedBefore: at };
          const hits =
            ch === 'keyword'
              ? await t.services.store.keywordSearch('default', BANK, q.terms, filter, 100)
              : await t.services.store.semanticSearch('default', BANK, q.vector, filter, 100);
          lists.push(hits.map((h) => h.id));
        }
        const own = independentFigures(
          lists,
          cases.map((c) => c.expected_memory_ids),
          10,
        );
        close(body.channels[ch].recall_at_k, own.recall_at_k, `${ch} recall@10`);
        close(body.channels[ch].mrr, own.mrr, `${ch} mrr`);
        assert.ok(own.recall_at_k > 0, ch);
      }
      const low = await t.call('POST', path(), { body: { k: 10, cases, budget: 'low' } });
      assert.deepEqual(
        low.body.channels.graph,
        { recall_at_k: 0, mrr: 0 },
        'budget low runs no graph channel',
      );
      assert.deepEqual(low.body.channels.temporal, { recall_at_k: 0, mrr: 0 });
    });

    test('list, get, rerun by id (with another k), delete', async () => {
      const first = await t.call('POST', path(), { body: { k: 5, cases } });
      assert.equal(first.status, 201);
      const got = await t.call('GET', path(`/${first.body.id}`));
      assert.equal(got.status, 200);
      assert.deepEqual(got.body, first.body);

      const again = await t.call('POST', path(), { body: { from: first.body.id } });
      assert.equal(again.status, 201, JSON.stringify(again.body));
      assert.notEqual(again.body.id, first.body.id);
      assert.equal(again.body.k, 5);
      const strip = (b: any) => ({ ...b, id: '', created_at: '' });
      assert.deepEqual(strip(again.body), strip(first.body), 'nothing changed: the same figures');

      const at1 = await t.call('POST', path(), { body: { from: first.body.id, k: 1 } });
      assert.equal(at1.body.k, 1);
      const want = await recallIds(1);
      close(at1.body.recall_at_k, want.recall_at_k, 'rerun recall@1');
      close(at1.body.mrr, want.mrr, 'rerun mrr@1');

      const list = await t.call('GET', path('?limit=2'));
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.items.map((e: { id: string }) => e.id),
        [at1.body.id, again.body.id],
      );
      assert.ok(!('cases' in list.body.items[0]));
      assert.ok(list.body.next_cursor);
      const next = await t.call('GET', path(`?limit=2&cursor=${list.body.next_cursor}`));
      assert.equal(next.body.items[0].id, first.body.id);

      const del = await t.call('DELETE', path(`/${first.body.id}`));
      assert.deepEqual(del.body, { deleted: true, id: first.body.id });
      assert.equal((await t.call('GET', path(`/${first.body.id}`))).status, 404);
      assert.equal((await t.call('DELETE', path(`/${first.body.id}`))).status, 404);
      // Its cases are gone with it: it cannot be rerun.
      const gone = await t.call('POST', path(), { body: { from: first.body.id } });
      assert.equal(gone.status, 404);
      assert.equal(gone.body.error.code, 'not_found');
    });

    test('bad requests are 400s (or 404 for an unknown run) and store nothing', async () => {
      const count = async () => (await t.call('GET', path('?limit=500'))).body.items.length;
      const before = await count();
      const one = cases[0]!;
      const many = Array.from({ length: 1001 }, () => one);
      const bad: [string, unknown, number, string?][] = [
        ['no cases', { cases: [] }, 400],
        ['neither cases nor from', { k: 3 }, 400],
        ['both cases and from', { cases: [one], from: '00000000-0000-0000-0000-000000000000' }, 400],
        ['no query', { cases: [{ expected_memory_ids: one.expected_memory_ids }] }, 400],
        ['empty query', { cases: [{ ...one, query: '' }] }, 400],
        ['no expected ids', { cases: [{ query: 'x', expected_memory_ids: [] }] }, 400],
        [
          'an expected id that is no memory id',
          { cases: [{ query: 'x', expected_memory_ids: ['m1'] }] },
          400,
        ],
        ['k 0', { k: 0, cases: [one] }, 400],
        ['k 101', { k: 101, cases: [one] }, 400],
        ['k 2.5', { k: 2.5, cases: [one] }, 400],
        ['1001 cases', { cases: many }, 400],
        ['a bad query_timestamp', { cases: [{ ...one, query_timestamp: 'soon' }] }, 400],
        ['an unknown run', { from: '00000000-0000-0000-0000-000000000000' }, 404],
        ['a run id that is no id', { from: 'latest' }, 404],
        [
          'a query over 500 tokens, after good cases',
          { cases: [one, one, { ...one, query: 'word '.repeat(600) }] },
          400,
          'cases.2.query',
        ],
      ];
      for (const [what, body, status, detail] of bad) {
        const r = await t.call('POST', path(), { body });
        assert.equal(r.status, status, `${what}: ${JSON.stringify(r.body)}`);
        if (detail) assert.equal(r.body.error.details[0].path, detail, what);
      }
      assert.equal(await count(), before);
      assert.equal(
        (await t.call('POST', bankPath('no-such-bank', '/evaluations'), { body: { cases } })).status,
        404,
      );
      assert.equal((await t.call('GET', path('/not-a-uuid'))).status, 404);
    });

    test('a recall key runs and reads; deleting needs admin; /v1/me serves the project of the key', async () => {
      const key = async (scopes: string[]) =>
        (await t.call('POST', '/v1/default/projects/default/keys', { body: { name: scopes.join(), scopes } }))
          .body.key as string;
      const recallKey = await key(['recall']);
      const retainKey = await key(['retain']);
      const adminKey = await key(['admin']);
      const run = await t.call('POST', path('', '/v1/me'), { token: recallKey, body: { k: 3, cases } });
      assert.equal(run.status, 201, JSON.stringify(run.body));
      assert.equal((await t.call('GET', path('', '/v1/me'), { token: recallKey })).status, 200);
      assert.equal(
        (await t.call('GET', path(`/${run.body.id}`, '/v1/me'), { token: recallKey })).status,
        200,
      );
      const denied = await t.call('DELETE', path(`/${run.body.id}`, '/v1/me'), { token: recallKey });
      assert.equal(denied.status, 403);
      assert.equal(denied.body.error.required_scope, 'admin');
      assert.equal(
        (await t.call('POST', path('', '/v1/me'), { token: retainKey, body: { k: 3, cases } })).status,
        403,
      );
      assert.equal(
        (await t.call('DELETE', path(`/${run.body.id}`, '/v1/me'), { token: adminKey })).status,
        200,
      );
    });

    test('an evaluation costs its cases’ Recalls, charged whole before any runs', async () => {
      clock += 60_000;
      const project = 'metered';
      assert.equal(
        (await t.call('POST', '/v1/default/projects', { body: { id: project, name: 'm' } })).status,
        201,
      );
      const limits = await t.call('PATCH', `/v1/default/projects/${project}`, {
        body: { limits: { recall_units_per_minute: 10 } },
      });
      assert.equal(limits.status, 200, JSON.stringify(limits.body));
      const token = (
        await t.call('POST', `/v1/default/projects/${project}/keys`, {
          body: { name: 'k', scopes: ['retain', 'recall'] },
        })
      ).body.key;
      const mine = (rest: string) => bankPath('lib', rest, '/v1/me');
      await t.call('POST', mine('/memories'), { token, body: { items: [{ content: 'Alice keeps bees.' }] } });
      const m = (await t.call('GET', mine('/memories'), { token })).body.items[0].id;
      const some = (n: number) =>
        Array.from({ length: n }, (_, i) => ({ query: `bees ${i}`, expected_memory_ids: [m] }));
      const used = async () =>
        (await t.call('GET', `/v1/default/projects/${project}`)).body.usage.budgets.recall_units_per_minute;
      const runs = async () => (await t.call('GET', mine('/evaluations'), { token })).body.items.length;

      // Three Recalls at budget mid: 2 units each.
      assert.equal(
        (await t.call('POST', mine('/evaluations'), { token, body: { cases: some(3) } })).status,
        201,
      );
      assert.equal(await used(), 6);
      const over = await t.call('POST', mine('/evaluations'), { token, body: { cases: some(3) } });
      assert.equal(over.status, 429, JSON.stringify(over.body));
      assert.equal(over.body.error.limit, 'recall_units_per_minute');
      assert.ok(Number(over.headers.get('retry-after')) >= 1);
      assert.equal(await used(), 6, 'a refused evaluation charges nothing');
      assert.equal(await runs(), 1, 'and keeps no run');
      const dear = await t.call('POST', mine('/evaluations'), { token, body: { cases: some(6) } });
      assert.equal(dear.status, 429);
      assert.match(dear.body.error.message, /alone costs 12 recall units/);
      // At budget low a Recall costs 1: three fit in what is left.
      const low = await t.call('POST', mine('/evaluations'), {
        token,
        body: { cases: some(3), budget: 'low' },
      });
      assert.equal(low.status, 201, JSON.stringify(low.body));
      assert.equal(await used(), 9);
    });

    test('runs go with their bank', async () => {
      const bank = 'short-lived';
      await t.call('POST', bankPath(bank, '/memories'), {
        body: { items: [{ content: 'A fleeting fact.' }] },
      });
      const m = (await t.call('GET', bankPath(bank, '/memories'))).body.items[0].id;
      const run = await t.call('POST', bankPath(bank, '/evaluations'), {
        body: { cases: [{ query: 'fleeting fact', expected_memory_ids: [m] }] },
      });
      assert.equal(run.status, 201);
      assert.equal(run.body.recall_at_k, 1);
      assert.equal((await t.call('DELETE', bankPath(bank))).status, 200);
      await t.call('POST', bankPath(bank, '/memories'), { body: { items: [{ content: 'Another fact.' }] } });
      assert.equal((await t.call('GET', bankPath(bank, `/evaluations/${run.body.id}`))).status, 404);
      assert.deepEqual((await t.call('GET', bankPath(bank, '/evaluations'))).body.items, []);
    });
  });
}
