import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** Reflect with a language model can take a while; a desktop agent's own timeout still applies. */
const CALL_TIMEOUT_MS = 5 * 60_000;

/** `http://host:8888` (or a base path behind a proxy, or the `/mcp` address itself) -> its `/mcp` endpoint. */
export function mcpEndpoint(base: string, bank?: string): URL {
  const url = new URL(base);
  if (!url.pathname.endsWith('/mcp')) url.pathname = `${url.pathname.replace(/\/+$/, '')}/mcp`;
  if (bank !== undefined) url.searchParams.set('bank', bank);
  return url;
}

/** Connects to a running mnemo's `/mcp` as an MCP client; fails at once on a bad address or key. */
export async function connectRemote(opts: { url: string; apiKey?: string; bank?: string }): Promise<Client> {
  const headers: Record<string, string> = opts.apiKey ? { Authorization: `Bearer ${opts.apiKey}` } : {};
  const transport = new StreamableHTTPClientTransport(mcpEndpoint(opts.url, opts.bank), {
    requestInit: { headers },
  });
  const client = new Client({ name: 'mnemo-mcp-stdio', version: pkg.version });
  await client.connect(transport);
  return client;
}

/**
 * A stdio-side server that forwards tool listing and calls to the remote mnemo, which checks
 * the key and its scopes and owns the database. Transport failures become tool errors.
 */
export function createProxyServer(remote: Client): Server {
  const server = new Server(
    { name: 'mnemo', version: pkg.version },
    { capabilities: { tools: {} }, instructions: remote.getInstructions() },
  );
  server.setRequestHandler(ListToolsRequestSchema, (req) => remote.listTools(req.params));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    try {
      return await remote.callTool(req.params, undefined, { timeout: CALL_TIMEOUT_MS });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return { isError: true, content: [{ type: 'text' as const, text: `mnemo server error: ${message}` }] };
    }
  });
  return server;
}
