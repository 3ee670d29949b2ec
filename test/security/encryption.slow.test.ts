/**
 * Managed encryption at rest: canaries retained into an encrypted bank are nowhere in the
 * database (every file of PGlite's data directory; every row, page and recent WAL segment of
 * PostgreSQL), while authorised reads get the plaintext back; a missing or wrong master key
 * stops the start; `mnemo keys rotate-master` re-wraps the data keys.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createApp } from '../../src/api/app.js';
import { compose } from '../../src/runtime/compose.js';
import { createLogger } from '../../src/api/logger.js';
import { loadConfig } from '../../src/config/load.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { runCli } from '../cli/cli.js';
import { createTestDatabase, ENGINES, seedDataDir, type TestDatabase } from '../helpers/engines.js';
import {
  ADMIN,
  type EncryptedApp,
  encryptedApp,
  filesUnder,
  findIn,
  newMasterKey,
  postgresContents,
} from './encryption-helpers.js';

/** A word the keyword pipeline keeps as it is (lower case, digits at the end: no stemming). */
const canary = (tag: string) => `zq${tag}${randomBytes(5).toString('hex')}`;

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out; last value ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

for (const engine of ENGINES) {
  describe(`managed encryption at rest (${engine})`, () => {
    const key = newMasterKey();
    let dataDir = '';
    let db: TestDatabase | null = null;
    let store: Store;
    let e: EncryptedApp;
    const c = {
      text: canary('text'),
      context: canary('ctx'),
      meta: canary('meta'),
      session: canary('sess'),
      entity: canary('ent'),
      queued: canary('queued'),
      rule: canary('rule'),
    };
    const control = canary('control');
    /** Where the database is, as configuration. */
    const location = () => (db ? { databaseUrl: db.url } : { dataDir });

    before(async () => {
      if (engine === 'pglite') {
        dataDir = mkdtempSync(join(tmpdir(), 'mnemo-enc-'));
        await seedDataDir(dataDir, 'migrated');
        store = await openStore({ dataDir });
      } else {
        db = await createTestDatabase();
        store = await openStore({ databaseUrl: db.url, poolSize: 4 });
      }
      e = await encryptedApp(store, key);
    });
    after(async () => {
      await e.close();
      await store.close().catch(() => {});
      await db?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    test('canaries retained into an encrypted bank are nowhere in the database; reads give them back', async () => {
      assert.equal((await e.call('PUT', '/v1/default/banks/vault', {})).status, 200);
      const patched = await e.call('PATCH', '/v1/default/banks/vault/config', {
        updates: { encryption: 'managed' },
      });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      assert.equal(patched.body.config.encryption, 'managed');
      const r = await e.call('POST', '/v1/default/banks/vault/memories', {
        items: [
          {
            content: `Alice said the vault word is ${c.text} and nobody may know`,
            context: `told during ${c.context}`,
            metadata: { note: c.meta, session_id: c.session, nested: { deep: [c.meta] } },
            entities: [{ text: `Zed ${c.entity}`, type: 'PERSON' }],
            tags: ['private'],
          },
        ],
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const queued = await e.call('POST', '/v1/default/banks/vault/memories', {
        async: true,
        items: [{ content: `queued fact ${c.queued}` }],
      });
      assert.equal(queued.status, 200);
      const rule = await e.call('POST', '/v1/default/banks/vault/directives', {
        name: 'discretion',
        text: `Never repeat ${c.rule} to anyone`,
      });
      assert.ok(rule.status === 200 || rule.status === 201, JSON.stringify(rule.body));
      await until(
        () => e.call('GET', `/v1/default/banks/vault/operations/${queued.body.operation_id}`),
        (x) => x.body.status === 'completed',
      );
      assert.equal(
        (
          await e.call('POST', '/v1/default/banks/open/memories', {
            items: [{ content: `plain ${control}` }],
          })
        ).status,
        200,
      );

      // authorised readers get plaintext: recall (keyword channel through keyed hashes), list, q, entities
      const rec = await e.call('POST', '/v1/default/banks/vault/memories/recall', {
        query: `what is ${c.text}?`,
      });
      const hit = rec.body.results.find((m: any) => m.text.includes(c.text));
      assert.ok(hit, JSON.stringify(rec.body));
      assert.ok(hit.scores.keyword > 0, 'found by the keyword channel');
      assert.equal(hit.context, `told during ${c.context}`);
      assert.deepEqual(hit.metadata, { note: c.meta, session_id: c.session, nested: { deep: [c.meta] } });
      assert.deepEqual(hit.entities, [`Zed ${c.entity}`]);
      assert.deepEqual(hit.tags, ['private']);
      const list = await e.call('GET', '/v1/default/banks/vault/memories');
      assert.deepEqual(list.body.items.map((m: any) => m.text).sort(), [
        `Alice said the vault word is ${c.text} and nobody may know`,
        `queued fact ${c.queued}`,
      ]);
      const q = await e.call('GET', `/v1/default/banks/vault/memories?q=${c.queued}`);
      assert.deepEqual(
        q.body.items.map((m: any) => m.text),
        [`queued fact ${c.queued}`],
      );
      const ents = await e.call('GET', '/v1/default/banks/vault/entities');
      assert.ok(
        ents.body.items.some((x: any) => x.name === `Zed ${c.entity}`),
        JSON.stringify(ents.body),
      );
      const rules = await e.call('GET', '/v1/default/banks/vault/directives');
      assert.deepEqual(
        rules.body.items.map((d: any) => d.text),
        [`Never repeat ${c.rule} to anyone`],
      );
      const byEntity = await e.call('POST', '/v1/default/banks/vault/memories/recall', {
        query: `Zed ${c.entity}`,
      });
      assert.ok(byEntity.body.results.some((m: any) => m.text.includes(c.text)));

      // what the database holds
      let blobs: { path: string; bytes: Buffer }[];
      if (engine === 'pglite') {
        await e.close();
        await store.close();
        blobs = filesUnder(join(dataDir, 'pgdata'));
      } else {
        blobs = await postgresContents(db!.url!);
      }
      assert.ok(blobs.length > 10, `${blobs.length} files or relations read`);
      const found = findIn(blobs, [control, ...Object.values(c)]);
      assert.ok(found.has(control), 'the plain control canary is found: the search can see plaintext');
      for (const [name, value] of Object.entries(c)) {
        assert.ok(!found.has(value), `${name} canary found in ${found.get(value)?.slice(0, 3).join(', ')}`);
      }
    });

    test('a missing, malformed or wrong master key stops the start; the right one reads the bank', async () => {
      if (engine === 'postgres') {
        await e.close();
        await store.close();
      }
      const base = { ...location(), adminToken: ADMIN, logLevel: 'silent' as const, worker: false };
      await assert.rejects(
        compose(loadConfig(base, {})),
        /1 bank\(s\) use managed encryption but MNEMO_MASTER_KEY is not set/,
      );
      await assert.rejects(compose(loadConfig({ ...base, masterKey: 'too-short' }, {})), /32 random bytes/);
      await assert.rejects(
        compose(loadConfig({ ...base, masterKey: newMasterKey() }, {})),
        /does not open the data keys of 1 of 1 encrypted bank/,
      );
      const config = loadConfig({ ...base, masterKey: key }, {});
      const s = await compose(config);
      try {
        const app = createApp(s, createLogger('silent'));
        const res = await app.request('/v1/default/banks/vault/memories', {
          headers: { authorization: `Bearer ${ADMIN}` },
        });
        const body = await res.json();
        assert.ok(body.items.some((m: any) => m.text.includes(c.text)));
      } finally {
        await s.close();
      }
    });

    test('mnemo keys rotate-master re-wraps the data keys; the old key then stops the start', async () => {
      const next = newMasterKey();
      const where = db ? ['--database-url', db.url!] : ['--data-dir', dataDir];
      // In this process (test/cli/cli.ts), without starting one. The command prints its result
      // with console.log rather than to the run's stdout (src/cli/master-key.ts): kept too.
      const cli = async (args: string[]) => {
        const printed: string[] = [];
        const log = console.log;
        console.log = (...parts: unknown[]) => void printed.push(`${parts.join(' ')}\n`);
        try {
          const r = await runCli(args, {});
          return { code: r.code, output: r.stdout + printed.join('') + r.stderr };
        } finally {
          console.log = log;
        }
      };
      const wrong = await cli(['keys', 'rotate-master', '--old', newMasterKey(), '--new', next, ...where]);
      assert.equal(wrong.code, 1, wrong.output);
      assert.match(wrong.output, /neither key opens the data keys of 1 bank\(s\).*nothing was changed/);
      const rotated = await cli(['keys', 'rotate-master', '--old', key, '--new', next, ...where]);
      assert.equal(rotated.code, 0, rotated.output);
      assert.match(rotated.output, /re-wrapped 1 data key/);
      const again = await cli(['keys', 'rotate-master', '--old', key, '--new', next, ...where]);
      assert.match(again.output, /re-wrapped 0 data key\(s\) \(1 already used the new key\)/);
      const base = { ...location(), adminToken: ADMIN, logLevel: 'silent' as const, worker: false };
      await assert.rejects(compose(loadConfig({ ...base, masterKey: key }, {})), /does not open/);
      const config = loadConfig({ ...base, masterKey: next }, {});
      const s = await compose(config);
      try {
        const app = createApp(s, createLogger('silent'));
        const res = await app.request('/v1/default/banks/vault/memories/recall', {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query: c.text }),
        });
        assert.ok((await res.json()).results.some((m: any) => m.text.includes(c.text)));
      } finally {
        await s.close();
      }
    });
  });
}
