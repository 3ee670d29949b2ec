import { readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { getBankTool, listBanksTool, listEntitiesTool } from './bank-tools.js';
import {
  createMentalModelTool,
  deleteMentalModelTool,
  getMentalModelTool,
  listMentalModelsTool,
  refreshMentalModelTool,
  updateMentalModelTool,
} from './mental-model-tools.js';
import { deleteMemoryTool, listMemoriesTool, recallTool, reflectTool, retainTool } from './memory-tools.js';
import { attachBankTool, createSpaceTool, listSpacesTool, removeBankTool } from './space-tools.js';
import { type AnyTool, hasScope, registerTool, type ToolContext } from './tool.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** Tools every caller sees; each still checks its own scope when called. */
export const TOOLS: readonly AnyTool[] = [
  retainTool,
  recallTool,
  reflectTool,
  listMemoriesTool,
  deleteMemoryTool,
  listBanksTool,
  getBankTool,
  listEntitiesTool,
  listMentalModelsTool,
  getMentalModelTool,
  refreshMentalModelTool,
];

/**
 * Space and mental model management: listed only for callers with the `admin` scope, the only
 * ones who could use them.
 */
export const ADMIN_TOOLS: readonly AnyTool[] = [
  createMentalModelTool,
  updateMentalModelTool,
  deleteMentalModelTool,
  listSpacesTool,
  createSpaceTool,
  attachBankTool,
  removeBankTool,
];

function instructions(ctx: ToolContext): string {
  const bank = ctx.defaultBank
    ? `Calls work on bank '${ctx.defaultBank}' unless they name another.`
    : 'Every bank tool needs a `bank` argument: the id of whose memory it is (e.g. a user id).';
  return (
    'mnemo is a long-term memory for agents. Use `retain` to store facts worth remembering, `recall` before ' +
    `answering to bring back what is relevant, and \`reflect\` for a written answer over the whole memory. ${bank}`
  );
}

/** An MCP server exposing mnemo's tools for one caller: its project, scopes and default bank. */
export function createMcpServer(ctx: ToolContext): McpServer {
  const server = new McpServer({ name: 'mnemo', version: pkg.version }, { instructions: instructions(ctx) });
  const tools = hasScope(ctx.scopes, 'admin') ? [...TOOLS, ...ADMIN_TOOLS] : TOOLS;
  for (const spec of tools) registerTool(server, ctx, spec);
  return server;
}
