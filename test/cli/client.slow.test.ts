import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Mnemo } from '../../packages/client/src/index.js';
import { ADMIN_TOKEN, type LiveServer, startLiveServer } from '../../packages/client/test/live-server.js';
import { ENGINES } from '../helpers/engines.js';
import { runCli, runCliProcess } from './cli.js';

for (const engine of ENGINES) {
  describe(`mnemo client commands (${engine})`, () => {
    let server: LiveServer;
    let env: Record<string, string>;
    let sdk: Mnemo;
    before(async () => {
      server = await startLiveServer(engine);
      env = { MNEMO_URL: server.url, MNEMO_ADMIN_TOKEN: ADMIN_TOKEN };
      sdk = new Mnemo({ baseUrl: server.url, adminToken: ADMIN_TOKEN });
    });
    after(() => server.close());

    test('retain from arguments and stdin, with every flag', async () => {
      const r = await runCli(
        [
          'retain',
          'alice@example.com',
          'Alice adopted a beagle named Pepper.',
          '--tags',
          'pets,dogs',
          '--entity',
          'Pepper:ANIMAL',
          '--timestamp',
          '2024-05-08T13:56:00Z',
          '--metadata',
          '{"turn":3}',
          '--context',
          'chat',
          '--type',
          'experience',
          '--document-id',
          'd1',
        ],
        env,
      );
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^stored 1 memory in alice@example\.com: [0-9a-f-]{36}\n$/);
      // A real process once: stdin from a pipe, output and exit code as a shell sees them.
      const piped = await runCliProcess(
        ['retain', 'alice@example.com', '--json'],
        env,
        'Alice works as a nurse in Lisbon.\n',
      );
      assert.equal(piped.code, 0, piped.stderr);
      const body = JSON.parse(piped.stdout);
      assert.equal(body.memories_created, 1);

      const items = await sdk.memories.list('alice@example.com').toArray();
      const pepper = items.find((m) => m.text.includes('Pepper'))!;
      assert.deepEqual(pepper.tags, ['pets', 'dogs']);
      assert.deepEqual(pepper.metadata, { turn: 3 });
      assert.deepEqual(pepper.entities, ['Pepper']);
      assert.equal(pepper.mentioned_at, '2024-05-08T13:56:00.000Z');
      assert.equal(pepper.context, 'chat');
      assert.equal(pepper.type, 'experience');
      assert.equal(pepper.document_id, 'd1');
      assert.ok(items.some((m) => m.text === 'Alice works as a nurse in Lisbon.'));
    });

    test('recall: a table for people, JSON for scripts', async () => {
      const human = await runCli(['recall', 'alice@example.com', 'what', 'is', 'the', "dog's", 'name'], env);
      assert.equal(human.code, 0, human.stderr);
      const lines = human.stdout.trim().split('\n');
      assert.match(lines[0]!, /^#\s+score\s+type\s+mentioned\s+text$/);
      assert.match(
        lines[1]!,
        /^1\s+\d\.\d{3}\s+experience\s+2024-05-08 13:56\s+Alice adopted a beagle named Pepper\.$/,
      );
      assert.match(lines.at(-1)!, /^\d+ results, \d+\/\d+ tokens$/);
      const json = await runCli(
        ['recall', 'alice@example.com', 'nurse', '--json', '--max-tokens', '50'],
        env,
      );
      assert.equal(json.code, 0, json.stderr);
      const res = JSON.parse(json.stdout);
      assert.equal(res.results[0].text, 'Alice works as a nurse in Lisbon.');
      assert.equal(res.usage.max_tokens, 50);
    });

    test('reflect, memories list and delete, banks show/config/entities', async () => {
      const reflect = await runCli(
        ['reflect', 'alice@example.com', 'What', 'pet', 'does', 'Alice', 'have?', '--json'],
        env,
      );
      assert.equal(reflect.code, 0, reflect.stderr);
      assert.equal(JSON.parse(reflect.stdout).mode, 'extractive');

      const list = await runCli(['memories', 'list', 'alice@example.com', '--limit', '1'], env);
      assert.equal(list.code, 0, list.stderr);
      assert.match(list.stdout, /^id\s+type\s+mentioned\s+tags\s+text\n/);
      assert.match(list.stdout, /more: --cursor \S+/);
      const all = JSON.parse(
        (await runCli(['memories', 'list', 'alice@example.com', '--all', '--json'], env)).stdout,
      );
      assert.equal(all.items.length, 2);
      const nurse = all.items.find((m: { text: string }) => m.text.includes('nurse'));
      const del = await runCli(['memories', 'delete', 'alice@example.com', nurse.id], env);
      assert.equal(del.code, 0, del.stderr);
      assert.equal(del.stdout.trim(), `deleted ${nurse.id}`);

      const show = await runCli(['banks', 'show', 'alice@example.com'], env);
      assert.match(show.stdout, /^id:\s+alice@example\.com$/m);
      assert.match(show.stdout, /^memories:\s+1$/m);
      const cfg = await runCli(
        ['banks', 'config', 'alice@example.com', '--set', 'disposition_empathy=5', '--json'],
        env,
      );
      assert.equal(cfg.code, 0, cfg.stderr);
      assert.deepEqual(JSON.parse(cfg.stdout).overrides, { disposition_empathy: 5 });
      const ents = await runCli(['banks', 'entities', 'alice@example.com'], env);
      assert.match(ents.stdout, /^Pepper\s+ANIMAL\s+1\s/m);
    });

    test('spaces: create, attach, list, banks, remove, delete', async () => {
      const run = async (...args: string[]) => {
        const r = await runCli(['spaces', ...args, '--json'], env);
        assert.equal(r.code, 0, r.stderr);
        return JSON.parse(r.stdout);
      };
      assert.equal((await run('create', 'acme', '--name', 'Acme Inc')).name, 'Acme Inc');
      assert.equal((await run('attach', 'acme', 'bob')).attached, true);
      assert.deepEqual(
        (await run('list')).items.map((s: { id: string; bank_count: number }) => [s.id, s.bank_count]),
        [['acme', 1]],
      );
      assert.deepEqual(
        (await run('banks', 'acme')).items.map((b: { id: string }) => b.id),
        ['bob'],
      );
      const listed = await runCli(['banks', 'list', '--space', 'acme'], env);
      assert.equal(listed.code, 0, listed.stderr);
      assert.match(listed.stdout, /^id\s+memories\s+entities\s+org\s+updated\nbob\s+0\s+0\s/);
      assert.equal((await run('remove', 'acme', 'bob')).attached, false);
      assert.equal((await run('delete', 'acme')).deleted, true);
    });

    test('an API key talks to its own project; errors are one readable line', async () => {
      await sdk.projects.create({ id: 'acme-co', name: 'Acme' });
      const writer = await sdk.projects.keys.create('acme-co', { name: 'w', scopes: ['retain', 'recall'] });
      const reader = await sdk.projects.keys.create('acme-co', { name: 'r', scopes: ['recall'] });
      const r = await runCli(
        ['retain', 'carol', 'Carol plays chess', '--api-key', writer.key, '--json'],
        env,
      );
      assert.equal(r.code, 0, r.stderr);
      const fromEnv = await runCli(['memories', 'list', 'carol', '--json'], {
        ...env,
        MNEMO_API_KEY: writer.key,
      });
      assert.equal(JSON.parse(fromEnv.stdout).items[0].text, 'Carol plays chess');

      const missing = await runCli(['memories', 'list', 'carol'], env);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /^mnemo: not_found \(404\): bank 'carol' not found — request [\w-]+\n$/);
      const denied = await runCli(['retain', 'carol', 'nope', '--api-key', reader.key], env);
      assert.equal(denied.code, 1);
      assert.match(denied.stderr, /forbidden \(403\).*the key needs scope 'retain'/);
      const invalid = await runCli(
        ['recall', 'carol', 'x', '--api-key', writer.key, '--budget', 'huge'],
        env,
      );
      assert.equal(invalid.code, 1);
      assert.match(invalid.stderr, /validation_error \(400\): budget/);
      const down = await runCliProcess(['banks', 'show', 'carol'], { MNEMO_URL: 'http://127.0.0.1:9' });
      assert.equal(down.code, 2);
      assert.match(down.stderr, /cannot reach http:\/\/127\.0\.0\.1:9/);
    });
  });
}
