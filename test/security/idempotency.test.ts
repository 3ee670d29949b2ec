/**
 * Idempotency-Key as an attacker uses it: a key with too few scopes replaying someone else's
 * answer (a freshly minted API key, a Retain), a retry that changes the query string, a key mint
 * retried for its secret; then what the database keeps (every file of PGlite's data directory;
 * every row, page and recent WAL segment of PostgreSQL): no minted secret and no text of an
 * encrypted bank sent with Idempotency-Keys; and a project deleted and created again under the
 * same id sees nothing of the old tenant.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { storeOver } from '../../src/store/open.js';
import { openPglite } from '../../src/store/pglite.js';
import { openPostgres } from '../../src/store/postgres.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, ENGINES, migratedTemplate, type TestDatabase } from '../helpers/engines.js';
import { TEST_CACHE_MB } from '../helpers/pglite-templates.js';
import { secretOf } from '../helpers/keys.js';
import {
  ADMIN,
  type EncryptedApp,
  encryptedApp,
  filesUnder,
  findIn,
  newMasterKey,
  postgresContents,
} from './encryption-helpers.js';

const canary = (tag: string) => `zq${tag}${randomBytes(5).toString('hex')}`;

interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

for (const engine of ENGINES) {
  describe(`Idempotency-Key after authorization, nothing secret kept (${engine})`, () => {
    let dataDir = '';
    let pg: TestDatabase | null = null;
    let db: Db;
    let store: Store;
    let e: EncryptedApp;
    /** Every minted secret and every encrypted bank's canary: none may be found on disk. */
    const secrets: string[] = [];
    const control = canary('control');

    async function call(
      method: string,
      path: string,
      opts: { token?: string; key?: string; body?: unknown } = {},
    ): Promise<Reply> {
      const headers: Record<string, string> = { authorization: `Bearer ${opts.token ?? ADMIN}` };
      if (opts.key) headers['idempotency-key'] = opts.key;
      let body: string | undefined;
      if (opts.body !== undefined) {
        body = JSON.stringify(opts.body);
        headers['content-type'] = 'application/json';
      }
      const res = await e.app.request(path, { method, headers, body });
      const text = await res.text();
      return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : null };
    }

    async function mint(project: string, scopes: string[]): Promise<string> {
      const r = await call('POST', `/v1/default/projects/${project}/keys`, { body: { name: 'k', scopes } });
      assert.equal(r.status, 201, r.text);
      return r.body.key;
    }

    const rowCount = async (sql: string, params: unknown[]) =>
      (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params))[0]!.n;

    before(async () => {
      if (engine === 'pglite') {
        dataDir = mkdtempSync(join(tmpdir(), 'mnemo-idem-'));
        db = await openPglite(dataDir, { template: await migratedTemplate(), cacheMb: TEST_CACHE_MB });
      } else {
        pg = await createTestDatabase();
        db = await openPostgres(pg.url!, { poolSize: 4 });
      }
      await migrate(db);
      store = storeOver(db);
      e = await encryptedApp(store, newMasterKey(), { worker: false });
    });
    after(async () => {
      await e.close();
      await store.close().catch(() => {});
      await pg?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    test("a recall-only key sending the operator's Idempotency-Key to the key mint gets no key", async () => {
      assert.equal(
        (await call('POST', '/v1/default/projects', { body: { id: 'victim', name: 'V' } })).status,
        201,
      );
      const key = randomUUID();
      const body = { name: 'ci', scopes: ['retain', 'recall'] };
      const minted = await call('POST', '/v1/default/projects/victim/keys', { key, body });
      assert.equal(minted.status, 201, minted.text);
      secrets.push(minted.body.key);
      const reader = await mint('default', ['recall']);
      const stolen = await call('POST', '/v1/default/projects/victim/keys', { token: reader, key, body });
      assert.equal(stolen.status, 403, stolen.text);
      assert.equal(stolen.body.error.required_scope, 'operator');
      assert.doesNotMatch(stolen.text, /mk_/);
      assert.equal(stolen.headers.get('idempotent-replayed'), null);
      const keys = await call('GET', '/v1/default/projects/victim/keys');
      assert.equal(keys.body.items.length, 1, 'no key minted for the attacker either');
    });

    test('a recall-only key cannot replay a Retain made by a retain key; each caller has its own keys', async () => {
      const writer = await mint('default', ['retain']);
      const writer2 = await mint('default', ['retain']);
      const reader = await mint('default', ['recall']);
      const key = randomUUID();
      const path = '/v1/default/banks/shared/memories';
      const body = { items: [{ content: 'written by the retain key' }] };
      const first = await call('POST', path, { token: writer, key, body });
      assert.equal(first.status, 200, first.text);
      const replayed = await call('POST', path, { token: reader, key, body });
      assert.equal(replayed.status, 403, replayed.text);
      assert.equal(replayed.body.error.required_scope, 'retain');
      assert.equal(replayed.headers.get('idempotent-replayed'), null);
      assert.ok(!replayed.text.includes(first.body.memory_ids[0]), 'no memory id of the first answer');
      // Another retain key's request under the same key string is its own request.
      const other = await call('POST', path, { token: writer2, key, body });
      assert.equal(other.status, 200, other.text);
      assert.equal(other.headers.get('idempotent-replayed'), null);
      assert.notDeepEqual(other.body.memory_ids, first.body.memory_ids);
      // The writer's own retry is replayed.
      const again = await call('POST', path, { token: writer, key, body });
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(again.body, first.body);
    });

    test('the same key with another query string or body is 409 idempotency_mismatch', async () => {
      assert.equal(
        (await call('POST', '/v1/default/spaces', { body: { id: 's1', name: 'S1' } })).status,
        201,
      );
      const key = randomUUID();
      const body = { items: [{ content: 'first' }] };
      const first = await call('POST', '/v1/default/banks/q/memories', { key, body });
      assert.equal(first.status, 200, first.text);
      const query = await call('POST', '/v1/default/banks/q/memories?space=s1', { key, body });
      assert.equal(query.status, 409, query.text);
      assert.equal(query.body.error.code, 'idempotency_mismatch');
      const changed = await call('POST', '/v1/default/banks/q/memories', {
        key,
        body: { items: [{ content: 'second' }] },
      });
      assert.equal(changed.status, 409);
      assert.equal(changed.body.error.code, 'idempotency_mismatch');
      const bank = await call('GET', '/v1/default/banks/q');
      assert.equal(bank.body.space_id, null, 'the mismatched request did not run');
    });

    test('a key mint retried is 409 already_done with the id, never the secret', async () => {
      const key = randomUUID();
      const body = { name: 'deploy', scopes: ['recall'] };
      const first = await call('POST', '/v1/default/projects/default/keys', { key, body });
      assert.equal(first.status, 201, first.text);
      secrets.push(first.body.key);
      const retry = await call('POST', '/v1/default/projects/default/keys', { key, body });
      assert.equal(retry.status, 409, retry.text);
      assert.equal(retry.body.error.code, 'already_done');
      assert.equal(retry.body.error.id, first.body.id);
      assert.doesNotMatch(retry.text, /mk_/);
      const other = await call('POST', '/v1/default/projects/default/keys', {
        key,
        body: { ...body, name: 'other' },
      });
      assert.equal(other.body.error.code, 'idempotency_mismatch');
      const kept = await db.query<{ response: string }>(
        'SELECT response::text AS response FROM idempotency WHERE key = $1',
        [key],
      );
      assert.equal(kept.length, 1);
      assert.ok(!kept[0]!.response.includes(secretOf(first.body.key)), kept[0]!.response);
    });

    test('answers about an encrypted bank are kept sealed; switching or deleting the bank drops them', async () => {
      for (const bank of ['vault', 'flip']) {
        assert.equal((await call('PUT', `/v1/default/banks/${bank}`, { body: {} })).status, 200);
        const p = await call('PATCH', `/v1/default/banks/${bank}/config`, {
          body: { updates: { encryption: 'managed' } },
        });
        assert.equal(p.status, 200, p.text);
      }
      const text = canary('text');
      const rule = canary('rule');
      secrets.push(text, rule);
      const retained = await call('POST', '/v1/default/banks/vault/memories', {
        key: randomUUID(),
        body: { items: [{ content: `the vault word is ${text}` }] },
      });
      assert.equal(retained.status, 200, retained.text);
      const dKey = randomUUID();
      const dBody = { name: 'discretion', text: `Never repeat ${rule}` };
      const made = await call('POST', '/v1/default/banks/vault/directives', { key: dKey, body: dBody });
      assert.ok(made.status < 300, made.text);
      assert.equal(made.body.text, dBody.text);
      const replay = await call('POST', '/v1/default/banks/vault/directives', { key: dKey, body: dBody });
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(replay.body, made.body, 'the sealed answer opens to the same answer');
      const kept = await db.query<{ encrypted: boolean; response: string }>(
        `SELECT encrypted, response::text AS response FROM idempotency WHERE bank_id = 'vault'`,
      );
      assert.equal(kept.length, 2);
      for (const k of kept) {
        assert.equal(k.encrypted, true);
        assert.ok(!k.response.includes(rule) && !k.response.includes('discretion'), k.response);
      }

      // Switching a bank's encryption drops its kept answers: the retry runs again.
      const fKey = randomUUID();
      const fBody = { name: 'flip rule', text: 'keep it short' };
      const f1 = await call('POST', '/v1/default/banks/flip/directives', { key: fKey, body: fBody });
      assert.ok(f1.status < 300, f1.text);
      assert.equal(await rowCount(`idempotency WHERE bank_id = 'flip'`, []), 1);
      const off = await call('PATCH', '/v1/default/banks/flip/config', {
        body: { updates: { encryption: 'none' } },
      });
      assert.equal(off.status, 200, off.text);
      assert.equal(await rowCount(`idempotency WHERE bank_id = 'flip'`, []), 0);
      const f2 = await call('POST', '/v1/default/banks/flip/directives', { key: fKey, body: fBody });
      assert.equal(f2.headers.get('idempotent-replayed'), null);
      assert.notEqual(f2.body.id, f1.body.id);
      // Deleting a bank drops them too.
      assert.ok((await rowCount(`idempotency WHERE bank_id = 'flip'`, [])) > 0);
      assert.equal((await call('DELETE', '/v1/default/banks/flip')).status, 200);
      assert.equal(
        await rowCount(
          `idempotency WHERE bank_id = 'flip' AND status <> 0 AND response::text LIKE '%keep it short%'`,
          [],
        ),
        0,
      );
      assert.equal(await rowCount(`idempotency WHERE bank_id = 'flip'`, []), 0);
    });

    test('a kept answer older than a day is neither replayed nor a mismatch: the key runs anew', async () => {
      const key = randomUUID();
      const body = { items: [{ content: 'a day old' }] };
      const first = await call('POST', '/v1/default/banks/aged/memories', { key, body });
      assert.equal(first.status, 200, first.text);
      await db.query(`UPDATE idempotency SET created_at = now() - interval '25 hours' WHERE key = $1`, [key]);
      const other = await call('POST', '/v1/default/banks/aged/memories', {
        key,
        body: { items: [{ content: 'next day' }] },
      });
      assert.equal(other.status, 200, other.text);
      assert.equal(other.headers.get('idempotent-replayed'), null);
      const again = await call('POST', '/v1/default/banks/aged/memories', {
        key,
        body: { items: [{ content: 'next day' }] },
      });
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(again.body, other.body);
    });

    test('a project deleted and created again under its id sees nothing of the old tenant', async () => {
      assert.equal(
        (await call('POST', '/v1/default/projects', { body: { id: 'tenant', name: 'T' } })).status,
        201,
      );
      const limits = await call('PATCH', '/v1/default/projects/tenant', {
        body: { limits: { requests_per_minute: 1000 } },
      });
      assert.equal(limits.status, 200, limits.text);
      const old = await mint('tenant', ['retain', 'recall', 'admin']);
      const w = await call('POST', '/v1/me/banks/b/memories', {
        token: old,
        key: randomUUID(),
        body: { items: [{ content: 'old tenant memory' }] },
      });
      assert.equal(w.status, 200, w.text);
      assert.equal((await call('GET', '/v1/me/audit', { token: old })).body.items.length > 0, true);
      for (const table of ['audit', 'idempotency', 'rate_counters'])
        assert.ok(
          (await rowCount(`${table} WHERE project_id = 'tenant'`, [])) > 0,
          `${table} has rows to lose`,
        );

      assert.equal((await call('DELETE', '/v1/default/projects/tenant')).status, 200);
      // Every table keyed by project, whatever migration added it, holds nothing of the tenant.
      const tables = await db.query<{ name: string }>(
        `SELECT c.table_name AS name FROM information_schema.columns c
         JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
         WHERE c.table_schema = current_schema() AND c.column_name = 'project_id' AND t.table_type = 'BASE TABLE'`,
      );
      assert.ok(tables.length > 10);
      for (const t of tables)
        assert.equal(
          await rowCount(`${t.name} WHERE project_id = 'tenant'`, []),
          0,
          `${t.name} still holds rows`,
        );

      // A request of the old tenant still in flight at the deletion records its entry afterwards.
      await store.appendAudit({
        projectId: 'tenant',
        actorType: 'key',
        keyId: old.slice(3, 15),
        action: 'memories.retain',
        bankId: 'b',
        spaceId: null,
        status: 200,
        requestId: 'late',
      });
      await new Promise((r) => setTimeout(r, 5));
      assert.equal(
        (await call('POST', '/v1/default/projects', { body: { id: 'tenant', name: 'T2' } })).status,
        201,
      );
      const fresh = await mint('tenant', ['retain', 'recall', 'admin']);
      assert.equal((await call('GET', '/v1/me/audit', { token: old })).status, 401);
      const audit = await call('GET', '/v1/me/audit', { token: fresh });
      assert.equal(audit.status, 200, audit.text);
      assert.deepEqual(audit.body.items, []);
      const banks = await call('GET', '/v1/me/banks', { token: fresh });
      assert.deepEqual(banks.body.items, []);
    });

    test('no minted secret and no encrypted canary sent with Idempotency-Keys is anywhere on disk', async () => {
      assert.ok(secrets.length >= 4);
      const plain = await call('POST', '/v1/default/banks/open/memories', {
        key: randomUUID(),
        body: { items: [{ content: `plain ${control}` }] },
      });
      assert.equal(plain.status, 200, plain.text);
      let blobs: { path: string; bytes: Buffer }[];
      if (engine === 'pglite') {
        await e.close();
        await store.close();
        blobs = filesUnder(join(dataDir, 'pgdata'));
      } else {
        blobs = await postgresContents(pg!.url!);
      }
      assert.ok(blobs.length > 10, `${blobs.length} files or relations read`);
      // A minted key's secret part: the key id is public, the rest must be nowhere.
      const needles = secrets.map((s) => (s.startsWith('mk_') ? s.slice(16) : s));
      const found = findIn(blobs, [control, ...needles]);
      assert.ok(found.has(control), 'the plain control canary is found: the search sees plaintext');
      for (const n of needles)
        assert.ok(!found.has(n), `${n} found in ${found.get(n)?.slice(0, 3).join(', ')}`);
    });
  });
}
