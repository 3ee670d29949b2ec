/**
 * Hindsight's published TypeScript client against mnemo's /v1/default surface over real HTTP.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient, createConfig, HindsightClient, sdk } from '@vectorize-io/hindsight-client';
import { createLogger } from '../../src/api/logger.js';
import { type RunningServer, startServer } from '../../src/runtime/server.js';
import { loadConfig } from '../../src/config/load.js';
import { until } from '../helpers/until.js';
import { ENGINES, openTestStore } from '../helpers/engines.js';

const TOKEN = 'hindsight-compat-token';

for (const engine of ENGINES) {
  describe(`Hindsight client compatibility (${engine})`, () => {
    let server: RunningServer;
    let store: Awaited<ReturnType<typeof openTestStore>>;
    let client: HindsightClient;
    /** The client's generated functions, for the calls its class does not wrap. */
    let raw: ReturnType<typeof createClient>;
    before(async () => {
      const config = loadConfig({ port: 0, adminToken: TOKEN, logLevel: 'silent' }, {});
      store = await openTestStore(engine);
      server = await startServer(config, createLogger('silent'), { store });
      client = new HindsightClient({ baseUrl: server.url, apiKey: TOKEN });
      raw = createClient(
        createConfig({ baseUrl: server.url, headers: { Authorization: `Bearer ${TOKEN}` } }),
      );
    });
    after(async () => {
      await server.close();
      await store.dispose();
    });

    test('getVersion', async () => {
      const v = await client.getVersion();
      assert.equal(v.api_version, 'v1');
      assert.equal(v.features.mcp, true);
    });

    test('createBank, getBankProfile, getBankConfig, updateBankConfig', async () => {
      const created = await client.createBank('hs-user', {
        name: 'Hindsight User',
        reflectMission: 'Help the user plan trips',
        disposition: { skepticism: 4, literalism: 2, empathy: 5 },
        retainExtractionMode: 'verbatim',
      });
      assert.equal(created.bank_id, 'hs-user');
      assert.equal(created.name, 'Hindsight User');
      assert.equal(created.mission, 'Help the user plan trips');
      assert.deepEqual(created.disposition, { skepticism: 4, literalism: 2, empathy: 5 });
      const profile = await client.getBankProfile('hs-user');
      assert.equal(profile.mission, 'Help the user plan trips');
      const cfg = await client.getBankConfig('hs-user');
      assert.equal(cfg.config.retain_extraction_mode, 'chunks');
      assert.equal(cfg.config.disposition_empathy, 5);
      const updated = await client.updateBankConfig('hs-user', {
        dispositionSkepticism: 2,
        enableGraphRetrieval: false,
      });
      assert.equal(updated.config.disposition_skepticism, 2);
      assert.equal(updated.config.enable_graph_retrieval, false);
      await assert.rejects(
        client.updateBankConfig('hs-user', { dispositionEmpathy: 9 }),
        /updateBankConfig failed/,
      );
    });

    test('retain, retainBatch, recall, listMemories', async () => {
      const r = await client.retain('hs-user', 'Alice loves hiking in the Alps', {
        timestamp: new Date('2024-05-01T10:00:00Z'),
        context: 'chat',
        tags: ['hobby'],
        metadata: { source: 'test' },
      });
      assert.equal(r.success, true);
      assert.equal(r.bank_id, 'hs-user');
      assert.equal(r.items_count, 1);
      const b = await client.retainBatch(
        'hs-user',
        [
          { content: 'Alice is allergic to peanuts' },
          { content: 'Alice works as a nurse in Lyon', entities: [{ text: 'Lyon', type: 'PLACE' }] },
        ],
        { documentId: 'profile-doc' },
      );
      assert.equal(b.items_count, 2);
      const rec = await client.recall('hs-user', 'Where does Alice work?', { maxTokens: 500 });
      assert.equal(rec.results[0]!.text, 'Alice works as a nurse in Lyon');
      assert.ok(rec.results[0]!.entities?.includes('Lyon'));
      const tagged = await client.recall('hs-user', 'hiking', { tags: ['hobby'], tagsMatch: 'all_strict' });
      assert.deepEqual(
        tagged.results.map((x) => x.text),
        ['Alice loves hiking in the Alps'],
      );
      const list = await client.listMemories('hs-user', { limit: 2, offset: 0 });
      assert.equal(list.total, 3);
      assert.equal(list.items.length, 2);
      const rest = await client.listMemories('hs-user', { limit: 2, offset: 2 });
      assert.equal(rest.items.length, 1);
      const doc = await client.listMemories('hs-user', { documentId: 'profile-doc' });
      assert.equal(doc.total, 2);
    });

    test('retainBatch async with an operation id completes once', async () => {
      const operationId = crypto.randomUUID();
      const items = [{ content: 'Bob moved to Porto in 2021' }, { content: 'Bob adopted a cat named Miso' }];
      const a = await client.retainBatch('hs-async', items, { async: true, operationId });
      const again = await client.retainBatch('hs-async', items, { async: true, operationId });
      assert.equal(a.async, true);
      assert.equal(a.operation_id, operationId);
      assert.equal(again.operation_id, operationId);
      await until(
        () =>
          fetch(`${server.url}/v1/default/banks/hs-async/operations/${operationId}`, {
            headers: { authorization: `Bearer ${TOKEN}` },
          }).then((r) => r.json()),
        (op: any) => op.status === 'completed',
      );
      const list = await client.listMemories('hs-async');
      assert.equal(list.total, 2);
    });

    test('reflect answers with text', async () => {
      const r = await client.reflect('hs-user', 'Is Alice allergic to anything?', { includeFacts: true });
      assert.match(r.text, /peanuts/);
      assert.ok(r.based_on);
    });

    test('recall has the entities section by default; includeEntities: false leaves it out', async () => {
      const rec = await client.recall('hs-user', 'Where does Alice work?', { maxTokens: 500 });
      assert.equal(rec.entities?.Lyon?.canonical_name, 'Lyon');
      assert.ok(rec.entities?.Lyon?.observations.some((o) => /Lyon/.test(o.text)));
      const off = await client.recall('hs-user', 'Where does Alice work?', { includeEntities: false });
      assert.equal(off.entities, null);
    });

    test('generated SDK: stats, operations, tags, graphs, time series, memory, history, chunks, dry run', async () => {
      const path = { bank_id: 'hs-user' };
      const stats = (await sdk.getAgentStats({ client: raw, path })).data!;
      assert.equal(stats.bank_id, 'hs-user');
      assert.equal(stats.total_nodes, 3);
      assert.equal(stats.total_documents, 1);
      assert.ok(stats.total_links >= 1);
      assert.equal(typeof stats.nodes_by_fact_type, 'object');
      const ops = (await sdk.listOperations({ client: raw, path: { bank_id: 'hs-async' } })).data!;
      assert.equal(ops.bank_id, 'hs-async');
      assert.ok(ops.operations.some((o) => o.task_type === 'retain' && o.status === 'completed'));
      assert.equal(ops.total, ops.operations.length);
      const tags = (await sdk.listTags({ client: raw, path, query: { q: 'hob*' } })).data!;
      assert.deepEqual(tags.items, [{ tag: 'hobby', count: 1 }]);
      const entities = (await sdk.getEntityGraph({ client: raw, path })).data!;
      assert.ok(entities.total_entities >= 1);
      const graph = (await sdk.getGraph({ client: raw, path })).data!;
      assert.equal(graph.total_units, 3);
      const series = (await sdk.getMemoriesTimeseries({ client: raw, path, query: { period: '1d' } })).data!;
      assert.equal(series.buckets?.length, 24);
      const memoryId = graph.nodes[0]!.id as string;
      const memory = (await sdk.getMemory({ client: raw, path: { ...path, memory_id: memoryId } }))
        .data as any;
      assert.equal(memory.id, memoryId);
      const history = (
        await sdk.getObservationHistory({ client: raw, path: { ...path, memory_id: memoryId } })
      ).data as any;
      assert.equal(history.history[0].event, 'retained');
      const chunks = (
        await sdk.listDocumentChunks({ client: raw, path: { ...path, document_id: 'profile-doc' } })
      ).data!;
      assert.deepEqual(
        chunks.items.map((c) => c.chunk_text),
        ['Alice is allergic to peanuts', 'Alice works as a nurse in Lyon'],
      );
      const chunk = (await sdk.getChunk({ client: raw, path: { chunk_id: chunks.items[1]!.chunk_id } }))
        .data!;
      assert.equal(chunk.chunk_index, 1);
      const dry = (
        await sdk.dryRunExtractMemories({ client: raw, path, body: { content: 'Bob sails on Sundays' } })
      ).data!;
      assert.deepEqual(
        dry.facts?.map((f) => f.text),
        ['Bob sails on Sundays'],
      );
      const live = (await sdk.getLiveness({ client: raw })).data!;
      assert.equal(live.status, 'alive');
      const banks = (await sdk.listBanks({ client: raw })).data!;
      assert.ok(banks.banks.some((b) => b.bank_id === 'hs-user' && b.fact_count === 3));
    });

    test('directives: create, list, get, update, delete', async () => {
      const d = await client.createDirective('hs-user', 'no-medical', 'Never give medical advice', {
        priority: 5,
        tags: ['health'],
      });
      assert.ok(d.id);
      assert.equal(d.content, 'Never give medical advice');
      assert.equal(d.name, 'no-medical');
      const list = await client.listDirectives('hs-user');
      assert.ok(list.items.some((x) => x.id === d.id));
      const got = await client.getDirective('hs-user', d.id);
      assert.equal(got.priority, 5);
      const up = await client.updateDirective('hs-user', d.id, {
        isActive: false,
        content: 'Never diagnose',
      });
      assert.equal(up.is_active, false);
      assert.equal(up.content, 'Never diagnose');
      await client.deleteDirective('hs-user', d.id);
      assert.ok(!(await client.listDirectives('hs-user')).items.some((x) => x.id === d.id));
    });

    test('listDocuments, getDocument, deleteDocument', async () => {
      const docs = await client.listDocuments('hs-user');
      const doc = docs.items.find((x: any) => x.id === 'profile-doc') as any;
      assert.equal(doc.memory_unit_count, 2);
      const got = await client.getDocument('hs-user', 'profile-doc');
      assert.equal(got?.original_text, 'Alice is allergic to peanuts\nAlice works as a nurse in Lyon');
      assert.equal(await client.getDocument('hs-user', 'missing-doc'), null);
      await client.deleteDocument('hs-user', 'profile-doc');
      assert.equal((await client.listMemories('hs-user')).total, 1);
    });

    test('deleteBank', async () => {
      const gone = await sdk.deleteBank({ client: raw, path: { bank_id: 'hs-async' } });
      assert.equal(gone.data?.success, true);
      await client.deleteBank('hs-user');
      await assert.rejects(client.getBankProfile('hs-user'), (e: any) => e.statusCode === 404);
    });
  });
}
