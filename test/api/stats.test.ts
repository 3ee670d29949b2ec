/**
 * Counts over a bank in Hindsight's shapes: `stats`, `stats/memories-timeseries` and `tags`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/api/logger.js';
import { OPERATION_RUNNERS } from '../../src/jobs/kinds.js';
import { startWorker } from '../../src/jobs/worker.js';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';
import { until } from '../helpers/until.js';

const NOW = new Date('2024-05-10T12:34:56Z');

for (const engine of ENGINES) {
  describe(`bank stats, time series and tags (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine, { now: () => NOW });
      const retain = (bank: string, items: unknown[]) =>
        t.call('POST', bankPath(bank, '/memories'), { body: { items } });
      assert.equal(
        (
          await retain('stats', [
            {
              content: 'Alice moved to Lyon',
              fact_type: 'world',
              entities: [{ text: 'Alice' }, { text: 'Lyon' }],
              document_id: 'd1',
              tags: ['user:alice', 'city'],
            },
            {
              content: 'Alice adopted a cat',
              fact_type: 'experience',
              entities: [{ text: 'Alice' }],
              document_id: 'd1',
              tags: ['user:alice'],
            },
            {
              content: 'Bob likes tea',
              fact_type: 'preference',
              entities: [{ text: 'Bob' }],
              tags: ['User:Bob'],
            },
          ])
        ).status,
        200,
      );
      const at = (iso: string, tags: string[] = []) => ({
        content: `event at ${iso}`,
        fact_type: 'world',
        timestamp: iso,
        tags,
      });
      await retain('series', [
        at('2024-05-10T08:15:00Z', ['100%', 'a_b']),
        at('2024-05-10T08:45:00Z', ['axb']),
        at('2024-05-08T10:00:00Z'),
        at('2024-05-01T10:00:00Z'),
      ]);
    });
    after(() => t.close());

    test('stats: memories, links, documents, operations and consolidation, in Hindsight’s names', async () => {
      const r = await t.call('GET', bankPath('stats', '/stats'));
      assert.equal(r.status, 200);
      const s = r.body;
      assert.equal(s.bank_id, 'stats');
      assert.equal(s.total_nodes, 3);
      assert.deepEqual(s.nodes_by_fact_type, { world: 1, experience: 1, preference: 1 });
      assert.equal(s.total_documents, 1);
      // Entity mentions: Alice and Lyon, Alice, Bob.
      assert.deepEqual(s.links_by_link_type, { entity: 4 });
      assert.deepEqual(s.links_by_fact_type, { world: 2, experience: 1, preference: 1 });
      assert.deepEqual(s.links_breakdown, {
        world: { entity: 2 },
        experience: { entity: 1 },
        preference: { entity: 1 },
      });
      assert.equal(s.total_links, 4);
      // Retain queued a consolidation that no worker has run.
      assert.equal(s.pending_operations, 1);
      assert.deepEqual(s.operations_by_status, { pending: 1 });
      assert.equal(s.failed_operations, 0);
      assert.equal(s.pending_consolidation, 3);
      assert.equal(s.last_consolidated_at, null);
      assert.equal(s.total_observations, 0);
      assert.ok(Date.parse(s.last_memory_write_at) > 0);
      assert.equal((await t.call('GET', bankPath('nope', '/stats'))).status, 404);
    });

    test('stats after consolidation: nothing pending, observations and their sources counted', async () => {
      const worker = startWorker(t.services, createLogger('silent'), {
        runners: OPERATION_RUNNERS,
        pollMs: 20,
      });
      try {
        await until(
          () => t.call('GET', bankPath('stats', '/stats')),
          (r) => r.body.pending_operations === 0,
        );
        // Read again: `stats` counts memories and operations in two statements, so the read that
        // saw the operation done may have counted the memories just before the run committed
        // (pending_consolidation 3 beside completed 1), a window a loaded machine widens. Once it
        // is done, a fresh read has it all.
        const s = (await t.call('GET', bankPath('stats', '/stats'))).body;
        assert.equal(s.pending_consolidation, 0);
        assert.ok(s.last_consolidated_at !== null);
        assert.equal(s.operations_by_status.completed, 1);
        const observations = s.nodes_by_fact_type.observation ?? 0;
        assert.equal(s.total_observations, observations);
        assert.equal(s.total_nodes, 3 + observations);
        const sources = (s.links_by_link_type.supports ?? 0) + (s.links_by_link_type.contradicts ?? 0);
        assert.ok(observations === 0 || sources >= observations, 'each observation has a source');
        assert.equal(
          s.total_links,
          Object.values(s.links_by_link_type as Record<string, number>).reduce((a, b) => a + b, 0),
        );
      } finally {
        await worker.stop();
      }
    });

    test('memories-timeseries: every bucket of the period, counted by the chosen time', async () => {
      const week = await t.call(
        'GET',
        bankPath('series', '/stats/memories-timeseries?time_field=mentioned_at'),
      );
      assert.equal(week.status, 200);
      assert.equal(week.body.period, '7d');
      assert.equal(week.body.trunc, 'day');
      assert.equal(week.body.time_field, 'mentioned_at');
      const days = week.body.buckets.map((b: any) => [b.time.slice(0, 10), b.world]);
      assert.deepEqual(days, [
        ['2024-05-04', 0],
        ['2024-05-05', 0],
        ['2024-05-06', 0],
        ['2024-05-07', 0],
        ['2024-05-08', 1],
        ['2024-05-09', 0],
        ['2024-05-10', 2],
      ]);
      assert.equal(week.body.buckets[6].experience, 0);
      assert.equal(week.body.buckets[6].observation, 0);
      const day = await t.call(
        'GET',
        bankPath('series', '/stats/memories-timeseries?period=1d&time_field=occurred_start'),
      );
      assert.equal(day.body.trunc, 'hour');
      assert.equal(day.body.buckets.length, 24);
      assert.equal(day.body.buckets[0].time, '2024-05-09T13:00:00.000Z');
      assert.equal(day.body.buckets.at(-1).time, '2024-05-10T12:00:00.000Z');
      // occurred_start is unset on these memories: each counts at its created_at (the real clock).
      const hour = await t.call('GET', bankPath('series', '/stats/memories-timeseries?period=1h'));
      assert.equal(hour.body.trunc, 'minute');
      assert.equal(hour.body.buckets.length, 60);
      const unknown = await t.call('GET', bankPath('series', '/stats/memories-timeseries?time_field=when'));
      assert.equal(unknown.body.time_field, 'created_at');
      const bad = await t.call('GET', bankPath('series', '/stats/memories-timeseries?period=2w'));
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error.code, 'validation_error');
    });

    test('tags: counts, most used first; `*` patterns in any case; LIKE’s wildcards match themselves', async () => {
      const all = await t.call('GET', bankPath('stats', '/tags'));
      assert.equal(all.status, 200);
      assert.deepEqual(all.body, {
        items: [
          { tag: 'user:alice', count: 2 },
          { tag: 'User:Bob', count: 1 },
          { tag: 'city', count: 1 },
        ].sort((a, b) => b.count - a.count || (a.tag < b.tag ? -1 : 1)),
        total: 3,
        limit: 100,
        offset: 0,
      });
      const users = await t.call('GET', bankPath('stats', '/tags?q=user:*'));
      assert.deepEqual(users.body.items.map((x: any) => x.tag).sort(), ['User:Bob', 'user:alice']);
      assert.equal(users.body.total, 2);
      const exact = await t.call('GET', bankPath('stats', '/tags?q=CITY'));
      assert.deepEqual(exact.body.items, [{ tag: 'city', count: 1 }]);
      assert.equal((await t.call('GET', bankPath('stats', '/tags?q=cit'))).body.total, 0);
      const paged = await t.call('GET', bankPath('stats', '/tags?limit=1&offset=1'));
      assert.equal(paged.body.items.length, 1);
      assert.equal(paged.body.total, 3);
      const literal = async (q: string) =>
        (await t.call('GET', bankPath('series', `/tags?q=${encodeURIComponent(q)}`))).body.items.map(
          (x: any) => x.tag,
        );
      assert.deepEqual(await literal('100%'), ['100%']);
      assert.deepEqual(await literal('a_b'), ['a_b']);
      assert.deepEqual(await literal('a*b'), ['a_b', 'axb'].sort());
      const made = await t.call('POST', bankPath('stats', '/mental-models'), {
        body: { name: 'm', source_query: 'q?', tags: ['model-only', 'shared'] },
      });
      assert.equal(made.status, 200, JSON.stringify(made.body));
      const mm = await t.call('GET', bankPath('stats', '/tags?source=mental_models'));
      assert.equal(mm.status, 200, JSON.stringify(mm.body));
      assert.deepEqual(
        mm.body.items.map((x: any) => [x.tag, x.count]),
        [
          ['model-only', 1],
          ['shared', 1],
        ],
      );
      assert.ok(
        !(await t.call('GET', bankPath('stats', '/tags'))).body.items.some(
          (x: any) => x.tag === 'model-only',
        ),
      );
    });

    test('the project-key surface needs the recall scope', async () => {
      const key = async (scopes: string[]) =>
        (await t.call('POST', '/v1/default/projects/default/keys', { body: { name: scopes.join(), scopes } }))
          .body.key;
      const retainOnly = await key(['retain']);
      for (const path of ['/stats', '/stats/memories-timeseries', '/tags']) {
        const denied = await t.call('GET', bankPath('stats', path, '/v1/me'), { token: retainOnly });
        assert.equal(denied.status, 403, path);
        assert.equal(denied.body.error.required_scope, 'recall');
      }
      const recall = await key(['recall']);
      assert.equal(
        (await t.call('GET', bankPath('stats', '/stats', '/v1/me'), { token: recall })).status,
        200,
      );
    });
  });
}
