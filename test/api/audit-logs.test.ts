/**
 * `GET .../banks/{bank}/audit-logs` and `.../audit-logs/stats`: one bank's audit trail in
 * Hindsight's shape, paged by offset or cursor, filtered, and counted over time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bankPath, type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

for (const engine of ENGINES) {
  describe(`bank audit logs (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine);
      assert.equal((await t.call('PUT', bankPath('aud'), { body: {} })).status, 200);
      assert.equal((await t.call('PUT', bankPath('other'), { body: {} })).status, 200);
      for (const content of ['one', 'two', 'three'])
        assert.equal(
          (await t.call('POST', bankPath('aud', '/memories'), { body: { items: [{ content }] } })).status,
          200,
        );
      const patch = { body: { updates: { disposition_empathy: 4 } } };
      assert.equal((await t.call('PATCH', bankPath('aud', '/config'), patch)).status, 200);
      // An MCP tool call's entry, as the MCP layer writes it.
      await t.raw.appendAudit({
        projectId: 'default',
        actorType: 'operator',
        keyId: null,
        action: 'memories.recall',
        bankId: 'aud',
        spaceId: null,
        status: 200,
        requestId: 'mcp-req',
        transport: 'mcp',
      });
    });
    after(() => t.close());

    const list = async (query = '', bank = 'aud') => {
      const r = await t.call('GET', bankPath(bank, `/audit-logs${query}`));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body;
    };

    test('the bank’s entries only, newest first, in Hindsight’s shape', async () => {
      const page = await list();
      assert.equal(page.bank_id, 'aud');
      assert.deepEqual(
        page.items.map((e: any) => e.action),
        [
          'memories.recall',
          'banks.config.update',
          'memories.retain',
          'memories.retain',
          'memories.retain',
          'banks.upsert',
        ],
      );
      assert.equal(page.total, 6);
      assert.equal(page.total_capped, false);
      assert.deepEqual([page.limit, page.offset, page.next_cursor], [50, 0, null]);
      const e = page.items[1];
      assert.equal(e.bank_id, 'aud');
      assert.equal(e.transport, 'http');
      assert.equal(e.status, 200);
      assert.equal(e.started_at, e.at);
      assert.equal(e.ended_at, e.at);
      assert.deepEqual([e.request, e.response, e.duration_ms, e.metadata], [null, null, null, {}]);
      assert.equal(page.items[0].transport, 'mcp');
      assert.deepEqual(
        (await list('', 'other')).items.map((x: any) => x.action),
        ['banks.upsert'],
      );
    });

    test('filters: action, transport, dates', async () => {
      const retains = await list('?action=memories.retain');
      assert.equal(retains.total, 3);
      assert.ok(retains.items.every((e: any) => e.action === 'memories.retain'));
      assert.deepEqual(
        (await list('?transport=mcp')).items.map((e: any) => e.request_id),
        ['mcp-req'],
      );
      assert.equal((await list('?transport=http')).total, 5);
      assert.equal((await list('?transport=system')).total, 0);
      assert.equal((await list('?start_date=2999-01-01T00:00:00Z')).total, 0);
      assert.equal((await list('?end_date=2999-01-01T00:00:00Z')).total, 6);
    });

    test('pages by offset and by cursor', async () => {
      const all = (await list()).items.map((e: any) => e.id);
      const first = await list('?limit=4');
      assert.deepEqual(
        first.items.map((e: any) => e.id),
        all.slice(0, 4),
      );
      const next = await list(`?limit=4&cursor=${first.next_cursor}`);
      assert.deepEqual(
        next.items.map((e: any) => e.id),
        all.slice(4),
      );
      assert.equal(next.next_cursor, null);
      assert.deepEqual(
        (await list('?limit=2&offset=3')).items.map((e: any) => e.id),
        all.slice(3, 5),
      );
      for (const q of ['?limit=0', '?limit=501', '?offset=10001', '?transport=smoke', '?start_date=soon'])
        assert.equal((await t.call('GET', bankPath('aud', `/audit-logs${q}`))).status, 400, q);
      assert.equal((await t.call('GET', bankPath('nobank', '/audit-logs'))).status, 404);
    });

    test('stats: requests per action in every bucket of the period', async () => {
      const r = await t.call('GET', bankPath('aud', '/audit-logs/stats'));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(
        [r.body.bank_id, r.body.period, r.body.trunc, r.body.buckets.length],
        ['aud', '7d', 'day', 7],
      );
      assert.equal(r.body.start, r.body.buckets[0].time);
      // Summed over the buckets: the requests above may straddle a bucket's end.
      const actions: Record<string, number> = {};
      for (const b of r.body.buckets) {
        assert.equal(
          b.total,
          Object.values(b.actions as Record<string, number>).reduce((x, y) => x + y, 0),
        );
        for (const [a, n] of Object.entries(b.actions as Record<string, number>))
          actions[a] = (actions[a] ?? 0) + n;
      }
      assert.deepEqual(actions, {
        'banks.upsert': 1,
        'memories.retain': 3,
        'banks.config.update': 1,
        'memories.recall': 1,
      });
      assert.ok(r.body.buckets.at(-1).total > 0, 'the current bucket is last');
      const one = await t.call('GET', bankPath('aud', '/audit-logs/stats?period=1h&action=memories.retain'));
      assert.equal(one.body.buckets.length, 60);
      assert.equal(
        one.body.buckets.reduce((x: number, b: any) => x + b.total, 0),
        3,
      );
      assert.equal((await t.call('GET', bankPath('aud', '/audit-logs/stats?period=2d'))).status, 400);
    });
  });
}
