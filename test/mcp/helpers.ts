/**
 * A listening mnemo (startServer on port 0) over a real test store, plus MCP clients of the
 * SDK itself, so the whole path runs: socket, Hono, auth, the Streamable HTTP transport, tools.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createLogger } from '../../src/api/logger.js';
import { type RunningServer, startServer } from '../../src/runtime/server.js';
import { loadConfig } from '../../src/config/load.js';
import { createKey, createProject } from '../../src/core/projects.js';
import type { Services } from '../../src/core/services.js';
import type { Scope } from '../../src/core/types.js';
import { ADMIN } from '../helpers/app.js';
import { type EngineName, openTestStore } from '../helpers/engines.js';

export interface McpTestServer {
  url: string;
  services: Services;
  /** Mints a key of `project` (created when missing) with these scopes. */
  key(project: string, scopes: Scope[]): Promise<string>;
  /** An SDK client connected to `/mcp` with this bearer credential (`?bank=` when given). */
  client(token: string | null, bank?: string): Promise<Client>;
  close(): Promise<void>;
}

export async function mcpTestServer(engine: EngineName): Promise<McpTestServer> {
  const config = loadConfig(
    { adminToken: ADMIN, logLevel: 'silent', port: 0, host: '127.0.0.1', worker: false },
    {},
  );
  const store = await openTestStore(engine);
  const server: RunningServer = await startServer(config, createLogger('silent'), { store });
  const { services } = server;
  const clients: Client[] = [];
  return {
    url: server.url,
    services,
    async key(project, scopes) {
      if (!(await store.getProject(project))) await createProject(services, { id: project, name: project });
      return (await createKey(services, project, { name: scopes.join('+'), scopes })).key;
    },
    async client(token, bank) {
      const url = new URL(`${server.url}/mcp`);
      if (bank !== undefined) url.searchParams.set('bank', bank);
      const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
      const client = new Client({ name: 'mnemo-test', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
      clients.push(client);
      return client;
    },
    async close() {
      await Promise.all(clients.map((c) => c.close()));
      await server.close();
      await store.dispose();
    },
  };
}

/** The text a model would read from a tool result. */
export const textOf = (r: unknown) =>
  ((r as CallToolResult).content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');

/** Calls a tool and returns its result, typed loosely for assertions. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  return (await client.callTool({ name, arguments: args })) as CallToolResult & { structuredContent?: any };
}
