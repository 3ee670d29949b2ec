import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { createMcpServer } from './server.js';
import type { ToolContext } from './tool.js';

/** Largest MCP request body: a retain call as large as the HTTP API accepts. */
export const MCP_MAX_BODY_BYTES = 10 * 1024 * 1024;

/**
 * Answers one Streamable HTTP request statelessly: a fresh server and transport per request, JSON
 * responses instead of SSE streams. Nothing lives between requests, so any number of mnemo
 * processes can serve `/mcp` behind one address. `hosts` is the DNS-rebinding protection of the
 * transport itself (`api/hosts.ts` `mcpHostOptions`), behind the app's own Host/Origin check.
 */
export async function handleMcpRequest(
  req: Request,
  ctx: ToolContext,
  hosts: { enableDnsRebindingProtection: boolean; allowedHosts?: string[]; allowedOrigins?: string[] } = {
    enableDnsRebindingProtection: false,
  },
  /** The body, already read (`api/json-body.ts`): the transport then does not parse it again. */
  parsedBody?: unknown,
): Promise<Response> {
  const server = createMcpServer(ctx);
  const transport = new WebStandardStreamableHTTPServerTransport({
    ...hosts,
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: MCP_MAX_BODY_BYTES,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(req, parsedBody === undefined ? undefined : { parsedBody });
  } finally {
    await server.close();
  }
}
