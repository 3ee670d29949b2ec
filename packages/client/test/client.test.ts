import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ENGINES } from '../../../test/helpers/engines.js';
import {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  Mnemo,
  MnemoError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionDeniedError,
  UnprocessableEntityError,
} from '../src/index.js';
import { ADMIN_TOKEN, type LiveServer, startLiveServer } from './live-server.js';

for (const engine of ENGINES) {
  describe(`@mnemo/client against a live server (${engine})`, () => {
    let server: LiveServer;
    let admin: Mnemo;
    let me: Mnemo;
    let apiKey: string;

    before(async () => {
      server = await startLiveServer(engine);
      admin = new Mnemo({ baseUrl: server.url, adminToken: ADMIN_TOKEN });
      await admin.projects.create({ id: 'acme', name: 'Acme' });
      const key = await admin.projects.keys.create('acme', {
        name: 'sdk',
        scopes: ['retain', 'recall', 'graph:read', 'admin'],
      });
      apiKey = key.key;
      me = new Mnemo({ baseUrl: server.url, apiKey });
    });
    after(() => server.close());

    test('picks the surface from the credentials', () => {
      assert.equal(me.surface, 'me');
      assert.equal(admin.surface, 'default');
      assert.equal(new Mnemo().baseUrl, 'http://127.0.0.1:8888');
      assert.throws(() => new Mnemo({ apiKey: 'a', adminToken: 'b' }), MnemoError);
      assert.throws(() => new Mnemo({ surface: 'me' }), /apiKey/);
    });

    test('health, readiness and version need no key', async () => {
      const anon = new Mnemo({ baseUrl: server.url });
      assert.deepEqual(await anon.health(), { status: 'ok' });
      assert.equal((await anon.ready()).status, 'ready');
      const v = await anon.version();
      assert.equal(v.api_version, 'v1');
      assert.equal(v.features.spaces, true);
    });

    test('retain, recall, list and delete on /v1/me with an encoded bank id', async () => {
      const bank = 'alice@example.com/team a';
      const r = await me.memories.retain(bank, {
        document_id: 'doc-1',
        items: [
          {
            content: 'Alice adopted a beagle named Pepper.',
            fact_type: 'experience',
            context: 'chat',
            timestamp: '2024-05-08T13:56:00Z',
            entities: [{ text: 'Pepper', type: 'ANIMAL' }],
            tags: ['pets'],
            metadata: { turn: 3 },
          },
          { content: 'Alice works as a nurse in Lisbon.', tags: ['work'] },
        ],
      });
      assert.equal(r.success, true);
      assert.equal(r.memories_created, 2);
      assert.equal(r.memory_ids.length, 2);
      assert.equal(r.document_id, 'doc-1');

      const recall = await me.memories.recall(bank, {
        query: "What is the name of Alice's dog?",
        max_tokens: 500,
      });
      assert.equal(recall.results[0]?.text, 'Alice adopted a beagle named Pepper.');
      assert.equal(recall.results[0]?.bank_id, bank);
      assert.ok(recall.usage.tokens_used > 0);
      const short = await me.memories.recall(bank, 'nurse Lisbon');
      assert.ok(short.results.some((m) => m.text.includes('nurse')));

      const first = await me.memories.list(bank, { limit: 1 });
      assert.equal(first.items.length, 1);
      assert.ok(first.next_cursor);
      const all = [];
      for await (const m of me.memories.list(bank, { limit: 1 })) all.push(m);
      assert.deepEqual(all.map((m) => m.text).sort(), [
        'Alice adopted a beagle named Pepper.',
        'Alice works as a nurse in Lisbon.',
      ]);
      const tagged = await me.memories.list(bank, { tags: ['pets'], tags_match: 'all_strict' }).toArray();
      assert.equal(tagged.length, 1);
      assert.deepEqual(tagged[0]?.metadata, { turn: 3 });

      const pepper = all.find((m) => m.text.includes('Pepper'))!;
      const { receipt, ...gone } = await me.memories.delete(bank, pepper.id);
      assert.deepEqual(gone, { deleted: true, id: pepper.id });
      assert.deepEqual(receipt.subject, { kind: 'memory', bank_id: bank, id: pepper.id });
      assert.deepEqual(await me.receipts.get(receipt.id), receipt);
      assert.equal((await me.receipts.verify(receipt)).valid, true);
      const forged = { ...receipt, deleted: { ...receipt.deleted, memories: 0 } };
      assert.deepEqual(await me.receipts.verify(forged), {
        valid: false,
        reason: 'bad_signature',
        key_id: receipt.key_id,
      });
      await assert.rejects(me.memories.delete(bank, pepper.id), NotFoundError);
      assert.equal((await me.memories.list(bank).toArray()).length, 1);
    });

    test('the two surfaces are different projects', async () => {
      await admin.memories.retain('shared-name', { items: [{ content: 'operator memory' }] });
      await assert.rejects(me.banks.get('shared-name'), NotFoundError);
      assert.equal((await admin.banks.get('shared-name')).memory_count, 1);
    });

    test('reflect, banks, config and entities', async () => {
      const bank = 'bob';
      await me.memories.retain(bank, {
        items: [
          {
            content: 'Bob met Carol in Paris.',
            entities: [
              { text: 'Carol', type: 'PERSON' },
              { text: 'Paris', type: 'PLACE' },
            ],
          },
          { content: 'Bob called Carol again.', entities: [{ text: 'Carol', type: 'PERSON' }] },
        ],
      });
      const answer = await me.reflect(bank, 'Who did Bob meet?');
      assert.equal(answer.mode, 'extractive');
      assert.ok(answer.response.includes('Carol'));
      assert.equal(answer.text, answer.response);
      await assert.rejects(
        me.reflect(bank, { query: 'x', response_schema: { type: 'object' } }),
        (e: unknown) =>
          e instanceof UnprocessableEntityError && e.status === 422 && e.code === 'llm_required',
      );

      const profile = await me.banks.get(bank);
      assert.equal(profile.id, bank);
      assert.equal(profile.memory_count, 2);

      const cfg = await me.banks.config.get(bank);
      assert.equal(cfg.config.disposition_empathy, 3);
      const updated = await me.banks.config.update(bank, {
        disposition_empathy: 5,
        recall_default_budget: 'low',
      });
      assert.equal(updated.config.disposition_empathy, 5);
      assert.deepEqual(updated.overrides, { disposition_empathy: 5, recall_default_budget: 'low' });
      const reset = await me.banks.config.update(bank, { disposition_empathy: null });
      assert.equal(reset.config.disposition_empathy, 3);
      await assert.rejects(
        me.banks.config.update(bank, { nonsense: 1 } as never),
        (e: unknown) =>
          e instanceof BadRequestError &&
          e.code === 'validation_error' &&
          e.details?.[0]?.path === 'updates.nonsense',
      );

      const first = await me.entities.list(bank, { limit: 1 });
      assert.equal(first.items[0]?.name, 'Carol');
      assert.equal(first.items[0]?.mention_count, 2);
      const names = [];
      for await (const e of me.entities.list(bank, { limit: 1 })) names.push(e.name);
      assert.deepEqual(names, ['Carol', 'Paris']);

      const { receipt, ...deleted } = await me.banks.delete(bank);
      assert.equal(receipt.subject.kind, 'bank');
      assert.equal(receipt.deleted.banks, 1);
      assert.deepEqual(deleted, {
        deleted: true,
        bank_id: bank,
        memories_deleted: 2,
        success: true,
        deleted_count: 2,
        message: `bank '${bank}' and its 2 memories deleted`,
      });
      await assert.rejects(me.banks.get(bank), NotFoundError);
    });

    test('bank list, identity, upsert and consolidation', async () => {
      for (const b of ['list-a', 'list-b', 'list-c'])
        await me.memories.retain(b, { items: [{ content: `note in ${b}` }] });
      const first = await me.banks.list({ limit: 2 });
      assert.equal(first.items.length, 2);
      assert.ok(first.next_cursor);
      const ids = (await me.banks.list({ limit: 2 }).toArray()).map((b) => b.id);
      for (const b of ['list-a', 'list-b', 'list-c']) assert.ok(ids.includes(b));
      assert.deepEqual([...ids].sort(), ids, 'ordered by id');

      const named = await me.banks.update('list-a', { name: 'Assistant A', mission: 'Keep notes.' });
      assert.equal(named.name, 'Assistant A');
      assert.equal((await me.banks.get('list-a')).mission, 'Keep notes.');
      await assert.rejects(me.banks.update('no-such-bank', { name: 'x' }), NotFoundError);

      const created = await me.banks.upsert('made-by-put', {
        name: 'Put',
        mission: 'Exists before any memory.',
      });
      assert.equal(created.id, 'made-by-put');
      assert.equal((await me.banks.get('made-by-put')).memory_count, 0);

      const c = await me.banks.consolidate('list-b');
      assert.ok(c.operation_id);
      assert.equal(c.operation.kind, 'consolidate');
    });

    test('directives: create, list, get, update, delete', async () => {
      await me.memories.retain('guided', { items: [{ content: 'Frank likes short answers.' }] });
      const d = await me.directives.create('guided', {
        text: 'Always answer in one sentence.',
        priority: 5,
        tags: ['style'],
      });
      assert.equal(d.text, 'Always answer in one sentence.');
      assert.equal(d.priority, 5);
      assert.equal(d.active, true);
      assert.deepEqual(
        (await me.directives.list('guided')).map((x) => x.id),
        [d.id],
      );
      assert.equal((await me.directives.get('guided', d.id)).tags[0], 'style');
      const off = await me.directives.update('guided', d.id, { active: false });
      assert.equal(off.active, false);
      assert.equal(off.text, d.text);
      assert.deepEqual(await me.directives.delete('guided', d.id), { deleted: true, id: d.id });
      await assert.rejects(me.directives.get('guided', d.id), NotFoundError);
    });

    test('mental models: create, refresh, history, dry run, clear, update, delete', async () => {
      await me.memories.retain('modelled', { items: [{ content: 'Heidi grows tomatoes on her balcony.' }] });
      const made = await me.mentalModels.create('modelled', {
        id: 'garden',
        name: 'Garden',
        source_query: 'What does Heidi grow?',
      });
      assert.equal(made.mental_model_id, 'garden');
      const waitFor = async (operationId: string) => {
        for (let i = 0; i < 200; i++) {
          const op = await me.operations.get('modelled', operationId);
          if (op.status === 'completed') return;
          await new Promise((r) => setTimeout(r, 50));
        }
        assert.fail('the refresh did not finish');
      };
      await waitFor(made.operation_id);
      const m = await me.mentalModels.get('modelled', 'garden');
      assert.match(m.content ?? '', /tomatoes/);
      assert.equal(m.is_stale, false);
      assert.equal((await me.mentalModels.get('modelled', 'garden', 'metadata')).content, undefined);
      const page = await me.mentalModels.list('modelled', { tags: ['none'] });
      assert.equal(page.total, 0);
      await me.memories.retain('modelled', { items: [{ content: 'Heidi also grows basil.' }] });
      const dry = await me.mentalModels.dryRunRefresh('modelled', 'garden');
      assert.match(dry.preview_content, /basil/);
      const queued = await me.mentalModels.refresh('modelled', 'garden');
      await waitFor(queued.operation_id);
      const history = await me.mentalModels.history('modelled', 'garden');
      assert.equal(history.length, 2);
      assert.equal((await me.mentalModels.clear('modelled', 'garden')).content, null);
      const renamed = await me.mentalModels.update('modelled', 'garden', { name: 'Balcony' });
      assert.equal(renamed.name, 'Balcony');
      assert.deepEqual(await me.mentalModels.delete('modelled', 'garden'), {
        success: true,
        deleted: true,
        id: 'garden',
      });
      await assert.rejects(me.mentalModels.get('modelled', 'garden'), NotFoundError);
    });

    test('webhooks: create (secret shown once), list, update, deliveries, delete', async () => {
      await me.memories.retain('hooked', { items: [{ content: 'Gina keeps a webhook.' }] });
      // Disabled: nothing is sent to this address during the test.
      const w = await me.webhooks.create('hooked', {
        url: 'https://93.184.216.34/hook',
        event_types: ['retain.completed'],
        enabled: false,
      });
      assert.match(w.secret ?? '', /^whsec_/);
      assert.equal(w.enabled, false);
      const [listed] = await me.webhooks.list('hooked');
      assert.equal(listed?.id, w.id);
      assert.equal(listed?.secret, null);
      assert.equal(listed?.has_secret, true);
      const changed = await me.webhooks.update('hooked', w.id, { http_config: { timeout_seconds: 5 } });
      assert.equal(changed.http_config.timeout_seconds, 5);
      assert.deepEqual((await me.webhooks.deliveries('hooked', w.id)).items, []);
      await assert.rejects(me.webhooks.create('hooked', { url: 'http://127.0.0.1:9/x' }), BadRequestError);
      assert.deepEqual(await me.webhooks.delete('hooked', w.id), { success: true, deleted: true, id: w.id });
      await assert.rejects(me.webhooks.update('hooked', w.id, { enabled: true }), NotFoundError);
    });

    test('evaluations: run, rerun, list (newest first), get, delete', async () => {
      const r = await me.memories.retain('judged', {
        items: [
          { content: 'Grace plays the cello on Sundays.' },
          { content: 'The harbour freezes in January.' },
        ],
      });
      const [cello, harbour] = r.memory_ids as [string, string];
      const run = await me.evaluations.run('judged', {
        k: 1,
        cases: [
          { query: 'Who plays the cello?', expected_memory_ids: [cello] },
          { query: 'When does the harbour freeze?', expected_memory_ids: [harbour, cello] },
        ],
      });
      assert.equal(run.k, 1);
      assert.equal(run.case_count, 2);
      assert.deepEqual(
        run.cases.map((c) => c.rank),
        [1, 1],
      );
      // The second case's two memories cannot both be in the first result: half of it is found.
      assert.equal(run.recall_at_k, (1 + 0.5) / 2);
      assert.equal(run.mrr, 1);
      const again = await me.evaluations.run('judged', { from: run.id, k: 2 });
      assert.equal(again.k, 2);
      assert.equal(again.cases.length, 2);
      const listed = await me.evaluations.list('judged').toArray();
      assert.deepEqual(
        listed.map((e) => e.id),
        [again.id, run.id],
      );
      assert.equal((await me.evaluations.get('judged', run.id)).cases[1]?.expected.length, 2);
      assert.deepEqual(await me.evaluations.delete('judged', run.id), { deleted: true, id: run.id });
      await assert.rejects(me.evaluations.get('judged', run.id), NotFoundError);
      await assert.rejects(me.evaluations.run('judged', { k: 0, from: again.id }), BadRequestError);
    });

    test('documents: offset pages as an iterable, get, delete', async () => {
      for (const doc of ['doc-a', 'doc-b', 'doc-c']) {
        await me.memories.retain('papers', {
          document_id: doc,
          items: [{ content: `${doc} first part.` }, { content: `${doc} second part.` }],
        });
      }
      const page = await me.documents.list('papers', { limit: 2 });
      assert.equal(page.total, 3);
      assert.equal(page.items.length, 2);
      assert.equal(page.next_cursor, '2');
      const all = await me.documents.list('papers', { limit: 2 }).toArray();
      assert.deepEqual(all.map((d) => d.id).sort(), ['doc-a', 'doc-b', 'doc-c']);
      assert.ok(all.every((d) => d.memory_count === 2));
      const a = await me.documents.get('papers', 'doc-a');
      assert.ok(a.original_text?.includes('doc-a first part.'));
      const del = await me.documents.delete('papers', 'doc-a');
      assert.equal(del.memories_deleted, 2);
      assert.equal((await me.documents.list('papers').toArray()).length, 2);
    });

    test('browsing and upkeep: stats, tags, graphs, memory history, chunks, dry run, clearing', async () => {
      const r = await me.memories.retain('browse', {
        items: [
          {
            content: 'Ada writes compilers',
            document_id: 'bio',
            tags: ['work'],
            entities: [{ text: 'Ada' }],
          },
          {
            content: 'Ada lives in Turin',
            document_id: 'bio',
            entities: [{ text: 'Ada' }, { text: 'Turin' }],
          },
        ],
      });
      const [first, second] = (r as { memory_ids: string[] }).memory_ids;
      const stats = await me.banks.stats('browse');
      assert.equal(stats.total_nodes, 2);
      assert.equal(stats.links_by_link_type.entity, 3);
      assert.equal((await me.banks.timeseries('browse', { period: '1h' })).buckets.length, 60);
      assert.deepEqual((await me.banks.tags('browse')).items, [{ tag: 'work', count: 1 }]);
      assert.equal((await me.memories.get('browse', first!)).text, 'Ada writes compilers');
      assert.equal((await me.memories.history('browse', first!)).history[0]?.event, 'retained');
      assert.equal((await me.memories.graph('browse')).total_units, 2);
      const graph = await me.entities.graph('browse');
      assert.equal(graph.total_edges, 1);
      const ada = (await me.entities.list('browse')).items.find((e) => e.name === 'Ada')!;
      assert.equal((await me.entities.get('browse', ada.id)).observations.length, 2);
      const chunks = await me.documents.chunks('browse', 'bio');
      assert.deepEqual(
        chunks.items.map((c) => c.chunk_id),
        [first, second],
      );
      assert.equal((await me.documents.setTags('browse', 'bio', ['bio'])).memories_updated, 2);
      const dry = await me.memories.dryRunExtract('browse', { content: 'Ada likes tea' });
      assert.deepEqual(
        dry.facts.map((f) => f.text),
        ['Ada likes tea'],
      );
      assert.deepEqual((await me.banks.observationScopes('browse')).scopes, []);
      assert.equal((await me.banks.probeLlm('browse')).operations[0]?.status, 'not_configured');
      assert.equal((await me.banks.clearMemories('browse')).deleted_count, 2);
      assert.deepEqual((await me.banks.config.reset('browse')).overrides, {});
    });

    test('spaces: create, list, attach, banks, remove, delete', async () => {
      const space = await me.spaces.create({ id: 'team-x', name: 'Team X' });
      assert.equal(space.id, 'team-x');
      await assert.rejects(
        me.spaces.create({ id: 'team-x', name: 'again' }, { maxRetries: 0 }),
        ConflictError,
      );
      assert.deepEqual(await me.spaces.attach('team-x', 'dana@x.io'), {
        space_id: 'team-x',
        bank_id: 'dana@x.io',
        attached: true,
      });
      const listed = await me.spaces.list();
      assert.equal(listed.find((s) => s.id === 'team-x')?.bank_count, 1);
      const banks = await me.spaces.banks('team-x');
      assert.deepEqual(
        banks.map((b) => b.id),
        ['dana@x.io'],
      );
      await me.memories.retain('eve', { space: 'team-x', items: [{ content: 'Eve joined team X.' }] });
      assert.equal((await me.banks.get('eve')).space_id, 'team-x');
      assert.equal((await me.spaces.remove('team-x', 'dana@x.io')).attached, false);
      const gone = await me.spaces.delete('team-x');
      assert.equal(gone.deleted, true);
      assert.equal(gone.banks_unassigned, 1);
    });

    test('audit pages are async-iterable', async () => {
      const first = await me.audit.list({ limit: 2 });
      assert.equal(first.items.length, 2);
      const all = await me.audit.list({ limit: 3 }).toArray();
      assert.ok(all.length > 5);
      assert.ok(all.some((e) => e.action === 'memories.retain'));
      const retains = await me.audit.list({ action: 'spaces.create' }).toArray();
      assert.ok(retains.length >= 2);
      assert.ok(retains.every((e) => e.action === 'spaces.create'));
      assert.equal(new Set(all.map((e) => e.id)).size, all.length);
    });

    test('projects and keys (operator)', async () => {
      const p = await admin.projects.create({ id: 'p2', name: 'Second' });
      assert.equal(p.id, 'p2');
      assert.equal((await admin.projects.get('p2')).name, 'Second');
      const limited = await admin.projects.update('p2', { limits: { requests_per_minute: 100 } });
      assert.equal(limited.limits.requests_per_minute, 100);
      const budgeted = await admin.projects.update('p2', { limits: { characters_per_day: 5000 } });
      assert.equal(budgeted.limits.characters_per_day, 5000);
      const withUsage = await admin.projects.get('p2');
      assert.equal(withUsage.effective_limits.characters_per_day, 5000);
      assert.equal(withUsage.usage.budgets.characters_per_day, 0);
      assert.ok((await admin.projects.list()).some((x) => x.id === 'p2'));
      const k = await admin.projects.keys.create('p2', { name: 'reader', scopes: ['recall'] });
      assert.match(k.key, /^mk_/);
      const keys = await admin.projects.keys.list('p2');
      assert.deepEqual(
        keys.map((x) => x.id),
        [k.id],
      );
      assert.equal('key' in keys[0]!, false);
      // A mint retried under its Idempotency-Key never gets the secret again: 409 already_done, thrown at once.
      const mintKey = `mint-${Date.now()}`;
      const once = await admin.projects.keys.create(
        'p2',
        { name: 'ci', scopes: ['recall'] },
        { idempotencyKey: mintKey },
      );
      await assert.rejects(
        admin.projects.keys.create('p2', { name: 'ci', scopes: ['recall'] }, { idempotencyKey: mintKey }),
        (e: unknown) =>
          e instanceof ConflictError &&
          e.code === 'already_done' &&
          (e.body as { error: { id: string } }).error.id === once.id &&
          !JSON.stringify(e.body).includes(once.key),
      );
      await admin.projects.keys.revoke('p2', once.id);
      assert.deepEqual(await admin.projects.keys.revoke('p2', k.id), { revoked: true, id: k.id });
      await assert.rejects(
        async () => await new Mnemo({ baseUrl: server.url, apiKey: k.key }).memories.list('x'),
        AuthenticationError,
      );
      assert.deepEqual(await admin.projects.delete('p2'), { deleted: true, id: 'p2' });
      await assert.rejects(admin.projects.get('p2'), NotFoundError);
      // A project key is not the operator.
      await assert.rejects(
        me.projects.list(),
        (e: unknown) => e instanceof MnemoError && (e.status === 401 || e.status === 403),
      );
    });

    test('errors carry status, code, message, details and the request id', async () => {
      const bad = new Mnemo({ baseUrl: server.url, apiKey: 'mk_nope_nope' });
      await assert.rejects(
        async () => await bad.memories.list('a'),
        (e: unknown) => {
          assert.ok(e instanceof AuthenticationError);
          assert.equal(e.status, 401);
          assert.equal(e.code, 'unauthenticated');
          assert.ok(e.requestId && e.requestId.length > 8);
          return true;
        },
      );
      const k = await admin.projects.keys.create('acme', { name: 'recall-only', scopes: ['recall'] });
      const reader = new Mnemo({ baseUrl: server.url, apiKey: k.key });
      await assert.rejects(reader.memories.retain('a', { items: [{ content: 'x' }] }), (e: unknown) => {
        assert.ok(e instanceof PermissionDeniedError);
        assert.equal(e.requiredScope, 'retain');
        assert.equal(e.code, 'forbidden');
        return true;
      });
      await assert.rejects(me.memories.retain('a', { items: [{ content: '' }] }), (e: unknown) => {
        assert.ok(e instanceof BadRequestError);
        assert.equal(e.details?.[0]?.path, 'items.0.content');
        assert.equal(e.requestId, e.headers?.get('x-request-id'));
        return true;
      });
      await assert.rejects(
        me.banks.get('never-made'),
        (e: unknown) => e instanceof NotFoundError && e.code === 'not_found',
      );
      const huge = 'x'.repeat(99_000);
      await assert.rejects(
        me.memories.retain('a', { items: Array.from({ length: 110 }, () => ({ content: huge })) }),
        (e: unknown) => e instanceof PayloadTooLargeError && e.status === 413,
      );
    });

    test('document transfer: export, poll, download and import; a recall-only key exports and polls', async () => {
      await me.memories.retain('shelf', {
        document_id: 'book-1',
        items: [{ content: 'The heron nests by the old mill.' }],
      });
      await me.memories.retain('shelf', {
        document_id: 'book-2',
        items: [{ content: 'The otter swims at dawn.' }],
      });
      const sub = await me.transfer.export('shelf', { documentIds: ['book-1', 'book-2'] });
      assert.equal(typeof sub.operation_id, 'string');
      const op = await me.transfer.poll('shelf', sub.operation_id, { interval: 50 });
      assert.equal(op.status, 'completed', JSON.stringify(op));
      const result = op.result_metadata;
      assert.ok(result && 'storage_key' in result, JSON.stringify(result));
      assert.equal(result.document_count, 2);
      assert.equal(result.fact_count, 2);
      const zip = await me.transfer.download(result);
      assert.ok(zip instanceof Uint8Array);
      assert.equal(zip.length, result.byte_size);
      assert.deepEqual([...zip.subarray(0, 2)], [0x50, 0x4b], 'a ZIP');
      // By its key too; one that does not exist is a NotFoundError.
      assert.deepEqual(await me.transfer.download(result.storage_key), zip);
      await assert.rejects(me.transfer.download(`${result.storage_key}x`), NotFoundError);

      const imp = await me.transfer.import('shelf-copy', zip);
      const done = await me.transfer.poll('shelf-copy', imp.operation_id, { interval: 50 });
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.ok(done.result_metadata && 'documents_imported' in done.result_metadata);
      assert.equal(done.result_metadata.documents_imported, 2);
      assert.deepEqual((await me.documents.list('shelf-copy').toArray()).map((d) => d.id).sort(), [
        'book-1',
        'book-2',
      ]);
      // A Blob works as well; on_conflict decides what a held document becomes.
      const again = await me.transfer.import('shelf-copy', new Blob([zip]), { onConflict: 'skip' });
      const skipped = await me.transfer.poll('shelf-copy', again.operation_id, { interval: 50 });
      assert.ok(skipped.result_metadata && 'documents_skipped' in skipped.result_metadata);
      assert.equal(skipped.result_metadata.documents_skipped, 2);

      const reader = new Mnemo({
        baseUrl: server.url,
        apiKey: (await admin.projects.keys.create('acme', { name: 'reader', scopes: ['recall'] })).key,
      });
      const mine = await reader.transfer.export('shelf');
      const polled = await reader.transfer.poll('shelf', mine.operation_id, { interval: 50 });
      assert.equal(polled.status, 'completed');
      assert.ok(polled.result_metadata && 'storage_key' in polled.result_metadata);
      assert.ok((await reader.transfer.download(polled.result_metadata)).length > 0);
      await assert.rejects(reader.transfer.import('shelf', zip), PermissionDeniedError);
    });

    test('async retain returns an operation to wait for, list and (once finished) not cancel', async () => {
      const queued = await me.memories.retain('ops', {
        async: true,
        items: [{ content: 'queued one' }, { content: 'queued two' }],
      });
      assert.equal(queued.async, true);
      assert.deepEqual(queued.operation_ids, [queued.operation_id]);
      const done = await me.operations.wait('ops', queued.operation_id, { interval: 50, timeout: 30_000 });
      assert.equal(done.status, 'completed');
      assert.equal(done.memories_created, 2);
      assert.equal(done.items_count, 2);
      assert.equal((await me.operations.get('ops', queued.operation_id)).id, queued.operation_id);
      // Retain also queues a consolidation of its own.
      const listed = await me.operations.list('ops', { status: 'completed', limit: 1 }).toArray();
      assert.deepEqual(
        listed.filter((o) => o.kind === 'retain').map((o) => o.id),
        [queued.operation_id],
      );
      await assert.rejects(
        me.operations.cancel('ops', queued.operation_id, { maxRetries: 0 }),
        ConflictError,
      );
      assert.equal((await me.memories.list('ops').toArray()).length, 2);
    });

    test('a pending operation can be cancelled (its worker held)', async () => {
      const release = server.holdOperations();
      try {
        const c = new Mnemo({ baseUrl: server.url, adminToken: ADMIN_TOKEN });
        const q = await c.memories.retain('later', { async: true, items: [{ content: 'never stored' }] });
        assert.equal((await c.operations.get('later', q.operation_id)).status, 'pending');
        const cancelled = await c.operations.cancel('later', q.operation_id);
        assert.equal(cancelled.status, 'cancelled');
        assert.equal((await c.operations.wait('later', q.operation_id)).status, 'cancelled');
        assert.equal((await c.memories.list('later').toArray()).length, 0);
      } finally {
        release();
      }
    });

    test('a repeated Idempotency-Key stores once', async () => {
      const body = { items: [{ content: 'exactly once, please' }] };
      const a = await me.memories.retain('idem', body, { idempotencyKey: 'sdk-idem-1' });
      const b = await me.memories.retain('idem', body, { idempotencyKey: 'sdk-idem-1' });
      assert.deepEqual(b, a);
      assert.equal((await me.banks.get('idem')).memory_count, 1);
    });

    test('a caller abort stops the call', async () => {
      const ac = new AbortController();
      ac.abort();
      await assert.rejects(
        async () => await me.memories.list('a', {}, { signal: ac.signal }),
        (e: unknown) => {
          return e instanceof MnemoError && e.name === 'APIUserAbortError';
        },
      );
    });
  });
}
