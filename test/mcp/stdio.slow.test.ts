import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { openStore } from '../../src/store/open.js';
import { createTestDatabase, ENGINES, seedDataDir, type TestDatabase } from '../helpers/engines.js';
import { call, type McpTestServer, mcpTestServer, textOf } from './helpers.js';
import { until } from '../helpers/until.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const CLI = ['--import', 'tsx', 'src/cli/main.ts', 'mcp'];

/** `mnemo mcp ...` as a desktop agent starts it: a child process speaking MCP on stdin/stdout. */
async function stdioClient(args: string[], env: Record<string, string> = {}) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...CLI, ...args],
    cwd: ROOT,
    env: { MNEMO_LOG_LEVEL: 'warn', ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const client = new Client({ name: 'mnemo-stdio-test', version: '1' });
  try {
    // Start-up (tsx, the store, the embedder) can take a minute on a loaded machine.
    await client.connect(transport, { timeout: 180_000 });
  } catch (err) {
    throw new Error(`${String(err)}\nstderr: ${stderr}`);
  }
  const pid = transport.pid;
  /** Closes the client and waits until the process is gone (the SDK may return before it is). */
  const closeAndWait = async () => {
    await client.close();
    await until(
      async () => {
        try {
          process.kill(pid!, 0);
          return false;
        } catch {
          return true;
        }
      },
      (gone) => gone,
    );
  };
  return { client, stderr: () => stderr, closeAndWait };
}

/** Runs `mnemo mcp ...` with nothing on stdin and returns how it ended. */
function runToExit(args: string[]): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...CLI, ...args], {
      cwd: ROOT,
      env: { ...process.env, MNEMO_LOG_LEVEL: 'warn' },
    });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.on('exit', (code) => resolve({ code, stderr, stdout }));
  });
}

describe('mnemo mcp over stdio, forwarding to a running server', () => {
  let m: McpTestServer;
  before(async () => {
    m = await mcpTestServer('pglite');
  });
  after(() => m.close());

  test('an SDK client spawns it, lists tools, retains to the default bank and recalls', async () => {
    const key = await m.key('p1', ['mcp', 'retain', 'recall']);
    const { client } = await stdioClient(['--bank', 'erin', '--url', m.url, '--api-key', key]);
    try {
      const { tools } = await client.listTools();
      assert.equal(tools.length, 11);
      const retainTool = tools.find((t) => t.name === 'retain')!;
      assert.deepEqual(retainTool.inputSchema.required, ['items'], 'bank is optional with --bank');
      assert.match(client.getInstructions() ?? '', /bank 'erin'/);

      const stored = await call(client, 'retain', { items: [{ content: 'Erin is allergic to peanuts' }] });
      assert.equal(stored.isError, undefined, textOf(stored));
      assert.equal(stored.structuredContent.memories_created, 1);
      assert.ok(await m.services.store.getBank('p1', 'erin'), "written to the key's project on the server");

      const found = await call(client, 'recall', { query: 'What is Erin allergic to?' });
      assert.match(found.structuredContent.results[0].text, /peanuts/);
      assert.match(textOf(found), /1\. \[\w+\] Erin is allergic to peanuts/);
    } finally {
      await client.close();
    }
  });

  test("the server's scope checks reach the agent: no retain scope, no retain", async () => {
    const key = await m.key('p1', ['mcp', 'recall']);
    const { client } = await stdioClient(['--bank', 'erin', '--url', m.url], { MNEMO_API_KEY: key });
    try {
      const r = await call(client, 'retain', { items: [{ content: 'not allowed' }] });
      assert.equal(r.isError, true);
      assert.match(textOf(r), /lacks the 'retain' scope/);
    } finally {
      await client.close();
    }
  });

  test('a key without the mcp scope stops it at start with a message on stderr', async () => {
    const key = await m.key('p1', ['retain', 'recall']);
    const r = await runToExit(['--bank', 'erin', '--url', m.url, '--api-key', key]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /mnemo: cannot use http:\/\/127\.0\.0\.1:\d+\/mcp: .*lacks the 'mcp' scope/);
    assert.equal(r.stdout, '', 'stdout carries only protocol messages');
  });
});

for (const engine of ENGINES) {
  describe(`mnemo mcp over stdio on its own store (${engine})`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-mcp-'));
    let db: TestDatabase | undefined;
    const storeArgs = () => (db ? ['--database-url', db.url!] : ['--data-dir', dir]);
    before(async () => {
      if (engine === 'postgres') db = await createTestDatabase();
      else await seedDataDir(dir, 'migrated'); // no initdb in the process under test
    });
    after(async () => {
      await db?.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    test('retains and recalls as the operator of project default; the data outlives the process', async () => {
      const { client, closeAndWait } = await stdioClient(['--bank', 'frank', ...storeArgs()]);
      try {
        const names = (await client.listTools()).tools.map((t) => t.name);
        assert.ok(names.includes('create_space'), 'operator: space tools too');
        await call(client, 'retain', { items: [{ content: 'Frank runs a bakery on Elm Street' }] });
        const found = await call(client, 'recall', { query: 'Where is the bakery?' });
        assert.match(found.structuredContent.results[0].text, /Elm Street/);
      } finally {
        await closeAndWait();
      }
      // The process closed its store on exit: another one opens it and finds the memory.
      const store = await openStore(db ? { databaseUrl: db.url } : { dataDir: dir });
      try {
        const page = await store.listMemories('default', 'frank', {}, { limit: 10 });
        assert.deepEqual(
          page.items.map((x) => x.text),
          ['Frank runs a bakery on Elm Street'],
        );
      } finally {
        await store.close();
      }
    });
  });
}
