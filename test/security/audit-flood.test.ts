/**
 * An unauthenticated flood must not grow the audit trail without bound: per project and
 * minute the first refusals are full entries, the rest one aggregate entry whose `count` still
 * reports every one of them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { REFUSALS_IN_FULL_PER_MINUTE as IN_FULL } from '../../src/api/audit.js';
import type { AuditEntry } from '../../src/core/types.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

/** Runs `n` requests, `width` at a time. */
async function flood(n: number, width: number, one: (i: number) => Promise<{ status: number }>) {
  for (let i = 0; i < n; i += width) {
    const batch = await Promise.all(Array.from({ length: Math.min(width, n - i) }, (_, j) => one(i + j)));
    for (const r of batch) assert.equal(r.status, 401);
  }
}

for (const engine of ENGINES) {
  describe(`bounded audit of unauthenticated floods (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine);
    });
    after(() => t.close());

    const entries = async (project: string): Promise<AuditEntry[]> => {
      const out: AuditEntry[] = [];
      let cursor: string | undefined;
      do {
        const page = await t.services.store.listAudit(project, {}, { limit: 500, cursor });
        out.push(...page.items);
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      return out;
    };
    // A flood may straddle a minute boundary: at most two minutes of full entries and aggregates.
    const BOUND = 2 * (IN_FULL + 1);
    const FLOOD = 500;

    // FLOOD is well past BOUND: were each refusal a row, the bound would fail.
    test(`${FLOOD} requests without credentials write a bounded number of rows, and all are counted`, async () => {
      await flood(FLOOD, 50, () => t.call('GET', '/v1/me/banks', { token: null }));
      const rows = await entries('-');
      assert.ok(rows.length <= BOUND, `${rows.length} rows`);
      assert.equal(
        rows.reduce((n, r) => n + r.count, 0),
        FLOOD,
      );
      const aggregates = rows.filter((r) => r.action === 'auth.refusals');
      assert.ok(aggregates.length >= 1 && aggregates.length <= 2);
      assert.ok(aggregates.reduce((n, r) => n + r.count, 0) >= FLOOD - 2 * IN_FULL);
      for (const a of aggregates) {
        assert.equal(a.status, 401);
        assert.equal(a.actor.type, 'unknown');
        assert.match(a.request_id, /^refusals:\d{4}-\d\d-\d\dT\d\d:\d\dZ$/);
      }
      assert.ok(rows.filter((r) => r.count === 1).length >= IN_FULL, 'the first ones are full entries');
    });

    test('wrong operator tokens and MCP without credentials: the operator sees the count in GET /audit', async () => {
      const before = (await entries('default')).length;
      await flood(300, 50, () => t.call('GET', '/v1/default/banks', { token: 'not-the-token' }));
      await flood(150, 50, () =>
        t.call('POST', '/mcp', {
          token: null,
          headers: { accept: 'application/json, text/event-stream' },
          body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        }),
      );
      const grown = (await entries('default')).length - before;
      assert.ok(grown <= BOUND, `${grown} new rows`);
      const listed = await t.call('GET', '/v1/default/audit?action=auth.refusals');
      assert.equal(listed.status, 200);
      const counted = listed.body.items.reduce((n: number, r: { count: number }) => n + r.count, 0);
      const full = (await entries('default')).filter((r) => r.status === 401 && r.count === 1).length;
      assert.equal(counted + full, 450);
    });

    test('refusals of an authenticated key are not aggregated: each is an entry', async () => {
      const key = (
        await t.call('POST', '/v1/default/projects/default/keys', {
          body: { name: 'reader', scopes: ['recall'] },
        })
      ).body.key;
      const before = (await entries('default')).filter((r) => r.status === 403).length;
      const n = IN_FULL + 20;
      for (let i = 0; i < n; i += 20) {
        const batch = await Promise.all(
          Array.from({ length: 20 }, () =>
            t.call('POST', '/v1/default/banks/b/memories', {
              token: key,
              body: { items: [{ content: 'x' }] },
            }),
          ),
        );
        for (const r of batch) assert.equal(r.status, 403);
      }
      const after = (await entries('default')).filter((r) => r.status === 403).length;
      assert.equal(after - before, n);
    });
  });
}
