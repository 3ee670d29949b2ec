/**
 * Audit completeness: every mutating endpoint of the OpenAPI document (so endpoints added later
 * are covered without touching this file) and every 401/403 leaves exactly the entry it should.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SCOPES } from '../../src/core/types.js';
import { ENGINES } from '../helpers/engines.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { REFUSALS_ACTION } from '../../src/store/sql/audit.js';
import { wrongSecret } from '../helpers/keys.js';

/** POSTs that only read; everything else that is not a GET must be audited. */
const READ_ONLY = [
  /\/memories\/recall$/,
  /\/reflect$/,
  /\/memories\/dry-run-extract$/,
  /\/regenerate$/,
  /\/health\/llm$/,
  /\/receipts\/verify$/,
  /\/dry-run-refresh$/,
];

const PARAMS: Record<string, string> = {
  bank: 'audit-bank',
  space: 'audit-space',
  project: 'audit-target',
  key_id: 'AAAAAAAAAAAA',
  id: '00000000-0000-4000-8000-000000000000',
  document_id: 'doc-1',
};

interface Op {
  method: string;
  template: string;
  path: string;
}

for (const engine of ENGINES) {
  describe(`audit completeness (${engine})`, () => {
    let t: TestApp;
    let ops: Op[] = [];
    let allKey = '';
    let mcpKey = '';
    let keyId = '';
    let n = 0;
    const rid = () => `audit-${++n}`;

    /** Every audit entry of a project by request id (the store, to see projects the API cannot). */
    const entries = async (project: string) => {
      const page = await t.services.store.listAudit(project, {}, { limit: 100_000 });
      return new Map(page.items.map((e) => [e.request_id, e]));
    };

    before(async () => {
      t = await testApp(engine);
      const doc = (await t.call('GET', '/openapi.json')).body;
      for (const [template, methods] of Object.entries<Record<string, unknown>>(doc.paths)) {
        // the API; /health, /version, /metrics and the bank template format's schema
        // (Hindsight's /v1/bank-template-schema, outside both surfaces) are public, never audited
        if (!template.startsWith('/v1/') || template === '/v1/bank-template-schema') continue;
        for (const method of Object.keys(methods)) {
          const path = template.replace(/\{(\w+)\}/g, (_, p: string) =>
            encodeURIComponent(PARAMS[p] ?? `x-${p}`),
          );
          ops.push({ method: method.toUpperCase(), template, path });
        }
      }
      // deletions last, so the other calls meet the bank and space they name
      ops = [...ops.filter((o) => o.method !== 'DELETE'), ...ops.filter((o) => o.method === 'DELETE')];
      assert.ok(ops.length > 40, `${ops.length} operations in the OpenAPI document`);
      assert.equal(
        (await t.call('POST', '/v1/default/projects', { body: { id: 'aud', name: 'A' } })).status,
        201,
      );
      const all = await t.call('POST', '/v1/default/projects/aud/keys', {
        body: { name: 'all', scopes: [...SCOPES] },
      });
      allKey = all.body.key;
      keyId = all.body.id;
      mcpKey = (
        await t.call('POST', '/v1/default/projects/aud/keys', { body: { name: 'mcp', scopes: ['mcp'] } })
      ).body.key;
      for (const token of [allKey, undefined]) {
        const base = token ? '/v1/me' : '/v1/default';
        await t.call('POST', `${base}/spaces`, { token, body: { id: 'audit-space', name: 'S' } });
        await t.call('POST', `${base}/banks/audit-bank/memories`, {
          token,
          body: { items: [{ content: 'audited' }] },
        });
      }
    });
    after(() => t.close());

    test('every mutating request is recorded with its action, actor, bank, status and request id', async () => {
      const expected: { op: Op; requestId: string; status: number; project: string }[] = [];
      for (const op of ops) {
        if (op.method === 'GET' || READ_ONLY.some((r) => r.test(op.template))) continue;
        const me = op.path.startsWith('/v1/me');
        const requestId = rid();
        const r = await t.call(op.method, op.path, {
          token: me ? allKey : undefined,
          body: op.method === 'DELETE' ? undefined : {},
          headers: { 'x-request-id': requestId },
        });
        expected.push({ op, requestId, status: r.status, project: me ? 'aud' : 'default' });
      }
      assert.ok(expected.length > 20);
      const byProject = { aud: await entries('aud'), default: await entries('default') };
      for (const { op, requestId, status, project } of expected) {
        const e = byProject[project as 'aud'].get(requestId);
        assert.ok(e, `${op.method} ${op.template} (${status}) left no audit entry`);
        assert.equal(e.status, status, `${op.method} ${op.template}`);
        assert.match(
          e.action,
          /^[a-z_]+(\.[a-z_]+)*$/,
          `${op.method} ${op.template} has a stable action name`,
        );
        assert.equal(e.actor.type, project === 'aud' ? 'key' : 'operator');
        if (project === 'aud') assert.equal(e.actor.key_id, keyId);
        if (op.template.includes('{bank}'))
          assert.equal(e.bank_id, 'audit-bank', `${op.method} ${op.template}`);
        if (op.template.includes('{space}')) assert.equal(e.space_id, 'audit-space');
      }
    });

    test('every denial is recorded: no credentials, a wrong secret, a missing scope', async () => {
      const denials: { op: Op; requestId: string; project: string; status: number; keyId: string | null }[] =
        [];
      for (const op of ops) {
        const me = op.path.startsWith('/v1/me');
        const body = op.method === 'GET' || op.method === 'DELETE' ? undefined : {};
        const call = async (token: string | null, project: string, status: number, id: string | null) => {
          const requestId = rid();
          const r = await t.call(op.method, op.path, { token, body, headers: { 'x-request-id': requestId } });
          assert.equal(r.status, status, `${op.method} ${op.template} with ${token?.slice(0, 8)}`);
          denials.push({ op, requestId, project, status, keyId: id });
        };
        // no credentials: /v1/me cannot tell whose project was knocked on
        await call(null, me ? '-' : 'default', 401, null);
        if (me) {
          // a real key id with a wrong secret is charged to that key's project
          await call(wrongSecret(allKey), 'aud', 401, keyId);
          // a key without the scope: 403 (mcp opens none of these)
          await call(mcpKey, 'aud', 403, mcpKey.split('_')[1]!);
        } else {
          await call('wrong-operator-token', 'default', 401, null);
        }
      }
      const byProject: Record<string, Map<string, any>> = {};
      for (const p of ['-', 'aud', 'default']) byProject[p] = await entries(p);
      // Unauthenticated refusals beyond REFUSALS_IN_FULL_PER_MINUTE a minute are one counted
      // entry (a flood cannot grow the trail): those must be in a project's aggregate instead.
      const unauthenticated: Record<string, number> = {};
      for (const d of denials) {
        const e = byProject[d.project]!.get(d.requestId);
        if (!e && d.status === 401 && d.keyId === null) {
          unauthenticated[d.project] = (unauthenticated[d.project] ?? 0) + 1;
          continue;
        }
        assert.ok(e, `denial ${d.status} of ${d.op.method} ${d.op.template} left no audit entry`);
        assert.equal(e.status, d.status);
        assert.equal(e.actor.key_id, d.keyId);
        if (d.status === 403) assert.match(e.action, /^[a-z_]+(\.[a-z_]+)*$/);
      }
      for (const [project, missing] of Object.entries(unauthenticated)) {
        const aggregated = [...byProject[project]!.values()].some((e) => e.action === REFUSALS_ACTION);
        assert.ok(aggregated, `${missing} refusals of ${project} neither kept in full nor counted`);
      }
      // and the API shows a project its own denials
      const listed = await t.call('GET', '/v1/me/audit?limit=500', { token: allKey });
      assert.ok(listed.body.items.some((x: any) => x.status === 401 && x.actor.key_id === keyId));
    });

    test('entries cannot be changed or removed through the API; a deleted bank keeps its trail', async () => {
      for (const method of ['DELETE', 'PATCH', 'PUT', 'POST']) {
        const r = await t.call(method, '/v1/me/audit', {
          token: allKey,
          body: method === 'DELETE' ? undefined : {},
        });
        assert.equal(r.status, 404, `${method} /audit`);
      }
      await t.call('POST', '/v1/me/banks/short-lived/memories', {
        token: allKey,
        body: { items: [{ content: 'x' }] },
      });
      await t.call('DELETE', '/v1/me/banks/short-lived', { token: allKey });
      const trail = await t.call('GET', '/v1/me/audit?bank=short-lived', { token: allKey });
      assert.deepEqual(
        trail.body.items.map((e: any) => e.action),
        ['banks.delete', 'memories.retain'],
      );
      // the audit listing needs admin
      const denied = await t.call('GET', '/v1/me/audit', { token: mcpKey });
      assert.equal(denied.status, 403);
      assert.equal(denied.body.error.required_scope, 'admin');
    });
  });
}
