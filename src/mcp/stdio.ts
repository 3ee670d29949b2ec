import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

const isRequest = (m: JSONRPCMessage) => 'method' in m && 'id' in m;
const isResponse = (m: JSONRPCMessage) => !('method' in m) && 'id' in m;

/**
 * Serves an MCP server on this process's stdin/stdout until the client goes away (stdin ends) or
 * a stop signal arrives. stdout carries only protocol messages. Requests already received when
 * stdin ends are still answered, so `... | mnemo mcp` works as well as a desktop agent does.
 */
export async function serveStdio(server: McpServer | Server): Promise<void> {
  const transport = new StdioServerTransport();
  await server.connect(transport);

  // Count requests in flight by wrapping the hooks the protocol layer installed on connect.
  let inFlight = 0;
  let drained: (() => void) | undefined;
  const deliver = transport.onmessage;
  transport.onmessage = (message: JSONRPCMessage) => {
    if (isRequest(message)) inFlight++;
    deliver?.(message);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message: JSONRPCMessage) => {
    await send(message);
    if (isResponse(message) && --inFlight === 0) drained?.();
  };

  await new Promise<void>((resolve) => {
    const stop = () => {
      if (inFlight === 0) resolve();
      else drained = resolve;
    };
    process.stdin.once('end', stop);
    process.stdin.once('close', stop);
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
}
