/** The SDK's bank audit log, model calls and templates, on /v1/me against a live server. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ENGINES } from '../../../test/helpers/engines.js';
import { BadRequestError, Mnemo } from '../src/index.js';
import { ADMIN_TOKEN, type LiveServer, startLiveServer } from './live-server.js';

for (const engine of ENGINES) {
  describe(`@mnemo/client ledgers and templates (${engine})`, () => {
    let server: LiveServer;
    let me: Mnemo;

    before(async () => {
      server = await startLiveServer(engine);
      const admin = new Mnemo({ baseUrl: server.url, adminToken: ADMIN_TOKEN });
      await admin.projects.create({ id: 'ledger', name: 'Ledger' });
      const key = await admin.projects.keys.create('ledger', { name: 'sdk', scopes: ['retain', 'admin'] });
      me = new Mnemo({ baseUrl: server.url, apiKey: key.key });
    });
    after(() => server.close());

    test('templates: dry run, import, export, schema', async () => {
      const manifest = {
        version: '1' as const,
        bank: { disposition_skepticism: 5, mission: 'Remember the build.' },
        directives: [{ name: 'Be brief', content: 'Answer in one sentence.' }],
      };
      const dry = await me.templates.import('tpl', manifest, { dryRun: true });
      assert.deepEqual([dry.dry_run, dry.bank_created, dry.directives_created], [true, true, ['Be brief']]);
      const done = await me.templates.import('tpl', manifest);
      assert.equal(done.dry_run, false);
      const exported = await me.templates.export('tpl');
      assert.equal(exported.bank?.disposition_skepticism, 5);
      assert.equal(exported.bank?.mission, 'Remember the build.');
      assert.deepEqual(
        exported.directives?.map((d) => d.content),
        ['Answer in one sentence.'],
      );
      await assert.rejects(
        me.templates.import('tpl', { version: '1', bank: { nonsense: 1 } } as never),
        BadRequestError,
      );
      const schema = await new Mnemo({ baseUrl: server.url }).templates.schema();
      assert.equal(schema.type, 'object');
    });

    test('the bank’s audit log and model calls', async () => {
      await me.memories.retain('tpl', { items: [{ content: 'The build is green.' }] });
      const page = await me.bankAudit.list('tpl', { limit: 1 });
      assert.equal(page.items[0]?.action, 'memories.retain');
      assert.ok(page.total >= 3);
      const all = [];
      for await (const e of me.bankAudit.list('tpl', { limit: 1 })) all.push(e.action);
      assert.equal(all.length, page.total);
      const stats = await me.bankAudit.stats('tpl', { period: '1d' });
      assert.equal(stats.buckets.length, 24);
      // No model is configured: nothing was called.
      assert.equal((await me.llmRequests.list('tpl')).total, 0);
      assert.deepEqual((await me.llmRequests.stats('tpl')).totals, []);
    });
  });
}
