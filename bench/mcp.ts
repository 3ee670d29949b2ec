/**
 * What the stateless MCP endpoint costs over the REST API: a listening server (PGlite in
 * memory, local embedder) with 500 memories in a bank, then sequential requests over a socket —
 * REST recall, MCP `tools/call recall`, MCP `tools/list`, MCP `initialize` — with latency
 * percentiles. Every MCP request builds a fresh server and transport (stateless mode).
 * Run: `npx tsx bench/mcp.ts [requests per row, default 200]`.
 */
import { createLogger } from '../src/api/logger.js';
import { startServer } from '../src/runtime/server.js';
import { loadConfig } from '../src/config/load.js';
import { openStore } from '../src/store/open.js';
import { chatLine } from './retain.js';

const N = Number(process.argv[2] ?? 200);
const BANK = 'bench-mcp';
const QUERY = 'Who adopted a puppy from the shelter?';

const config = loadConfig({ logLevel: 'silent', port: 0, host: '127.0.0.1', worker: false }, {});
const store = await openStore({});
const server = await startServer(config, createLogger('silent'), { store });

const json = { 'content-type': 'application/json' };
const mcpHeaders = { ...json, accept: 'application/json, text/event-stream' };
const rpc = (method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });

async function expectOk(res: Response): Promise<void> {
  const text = await res.text();
  if (res.status !== 200 || text.includes('"isError":true'))
    throw new Error(`${res.status} ${text.slice(0, 300)}`);
}

for (let b = 0; b < 5; b++) {
  const items = Array.from({ length: 100 }, (_, k) => ({ content: chatLine(b * 100 + k) }));
  await expectOk(
    await fetch(`${server.url}/v1/default/banks/${BANK}/memories`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ items }),
    }),
  );
}

const rows: [string, () => Promise<Response>][] = [
  [
    'REST recall',
    () =>
      fetch(`${server.url}/v1/default/banks/${BANK}/memories/recall`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ query: QUERY }),
      }),
  ],
  [
    'MCP tools/call recall',
    () =>
      fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: mcpHeaders,
        body: rpc('tools/call', { name: 'recall', arguments: { bank: BANK, query: QUERY } }),
      }),
  ],
  [
    'MCP tools/list',
    () => fetch(`${server.url}/mcp`, { method: 'POST', headers: mcpHeaders, body: rpc('tools/list', {}) }),
  ],
  [
    'MCP initialize',
    () =>
      fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: mcpHeaders,
        body: rpc('initialize', {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'bench', version: '1' },
        }),
      }),
  ],
];

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

for (const [, send] of rows) for (let i = 0; i < 10; i++) await expectOk(await send()); // warm-up
// Rows take turns, so a busy moment of the machine hits them all alike.
const times: number[][] = rows.map(() => []);
for (let i = 0; i < N; i++) {
  for (const [r, [, send]] of rows.entries()) {
    const t = performance.now();
    await expectOk(await send());
    times[r]!.push(performance.now() - t);
  }
}

console.log(`${N} sequential requests per row (interleaved), 500 memories in the bank\n`);
console.log('| request | p50 ms | p95 ms | mean ms |');
console.log('|---|---|---|---|');
for (const [r, [name]] of rows.entries()) {
  const sorted = times[r]!.sort((a, b) => a - b);
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  console.log(
    `| ${name} | ${pct(sorted, 0.5).toFixed(1)} | ${pct(sorted, 0.95).toFixed(1)} | ${mean.toFixed(1)} |`,
  );
}

await server.close();
await store.close();
