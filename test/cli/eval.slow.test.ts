/**
 * `mnemo eval run|list|show` against a live server: cases read from a JSONL file, a table for
 * people and JSON for scripts, a rerun by id, and a bad file named by its line.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Mnemo } from '../../packages/client/src/index.js';
import { ADMIN_TOKEN, type LiveServer, startLiveServer } from '../../packages/client/test/live-server.js';
import { ENGINES } from '../helpers/engines.js';
import { runCli } from './cli.js';

for (const engine of ENGINES) {
  describe(`mnemo eval (${engine})`, () => {
    let server: LiveServer;
    let env: Record<string, string>;
    let sdk: Mnemo;
    let dir: string;
    let cases: string;
    before(async () => {
      server = await startLiveServer(engine);
      env = { MNEMO_URL: server.url, MNEMO_ADMIN_TOKEN: ADMIN_TOKEN };
      sdk = new Mnemo({ baseUrl: server.url, adminToken: ADMIN_TOKEN });
      dir = mkdtempSync(join(tmpdir(), 'mnemo-eval-'));
      const r = await sdk.memories.retain('team', {
        items: [
          { content: 'Dana leads the payments team.' },
          { content: 'The office moved to Porto in March.' },
          { content: 'Dana prefers tea to coffee.' },
        ],
      });
      const [payments, porto, tea] = r.memory_ids;
      cases = join(dir, 'cases.jsonl');
      writeFileSync(
        cases,
        [
          { query: 'Who leads payments?', expected_memory_ids: [payments] },
          '',
          { query: 'Where is the office?', expected_memory_ids: [porto], tags: [] },
          { query: 'What does Dana drink?', expected_memory_ids: [tea, payments] },
        ]
          .map((c) => (typeof c === 'string' ? c : JSON.stringify(c)))
          .join('\n'),
      );
    });
    after(async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    });

    test('run prints the figures and each case; --json is the run; list and show find it', async () => {
      const human = await runCli(['eval', 'run', '--bank', 'team', '--cases', cases, '--k', '1'], env);
      assert.equal(human.code, 0, human.stderr);
      const lines = human.stdout.trim().split('\n');
      const id = /^evaluation ([0-9a-f-]{36}) of team: 3 cases, k 1, budget mid, max_tokens 2048$/.exec(
        lines[0]!,
      )?.[1];
      assert.ok(id, lines[0]);
      const run = await sdk.evaluations.get('team', id);
      assert.match(lines[2]!, /^\s+recall@1\s+mrr$/);
      assert.equal(lines[3], `recall    ${run.recall_at_k.toFixed(3)}     ${run.mrr.toFixed(3)}`);
      assert.ok(lines.some((l) => /^#\s+rank\s+recall@1\s+found by\s+query$/.test(l)));
      const last = lines.at(-1)!;
      const drink = run.cases[2]!;
      assert.match(last, new RegExp(`^3\\s+${drink.rank ?? '-'}\\s+${drink.recall_at_k.toFixed(3)}\\s+`));
      assert.match(last, /What does Dana drink\?$/);

      const json = await runCli(['eval', 'run', '--bank', 'team', '--from', id, '--json'], env);
      assert.equal(json.code, 0, json.stderr);
      const again = JSON.parse(json.stdout);
      assert.equal(again.k, 1, 'a rerun keeps k');
      assert.deepEqual(
        again.cases.map((c: { query: string }) => c.query),
        run.cases.map((c) => c.query),
      );

      const list = await runCli(['eval', 'list', '--bank', 'team'], env);
      assert.equal(list.code, 0, list.stderr);
      const rows = list.stdout.trim().split('\n');
      assert.match(rows[0]!, /^id\s+created\s+k\s+cases\s+recall@k\s+mrr\s+budget$/);
      assert.ok(rows[1]!.startsWith(again.id) && rows[2]!.startsWith(id), list.stdout);
      const shown = await runCli(['eval', 'show', id, '--bank', 'team', '--json'], env);
      assert.deepEqual(JSON.parse(shown.stdout), run);
    });

    test('a bad file, or neither --cases nor --from, is one readable error', async () => {
      const bad = join(dir, 'bad.jsonl');
      writeFileSync(bad, `${JSON.stringify({ query: 'ok', expected_memory_ids: ['x'] })}\nnot json\n`);
      let r = await runCli(['eval', 'run', '--bank', 'team', '--cases', bad], env);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /line 2 of .*bad\.jsonl is not JSON/);
      writeFileSync(bad, `${JSON.stringify({ query: 'no ids' })}\n`);
      r = await runCli(['eval', 'run', '--bank', 'team', '--cases', bad], env);
      assert.match(r.stderr, /line 1 of .*"expected_memory_ids" must be a non-empty array/);
      r = await runCli(['eval', 'run', '--bank', 'team'], env);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /give --cases <file.jsonl> or --from <run id>/);
      // What only the server knows: an id that is no memory id is its 400, named by path.
      writeFileSync(bad, `${JSON.stringify({ query: 'q', expected_memory_ids: ['m1'] })}\n`);
      r = await runCli(['eval', 'run', '--bank', 'team', '--cases', bad], env);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /validation_error \(400\).*cases\.0\.expected_memory_ids\.0/);
      assert.equal((await runCli(['eval', 'run', '--bank', 'team', '--from', 'nope'], env)).code, 1);
    });
  });
}
