import { type Command, Option } from 'commander';
import pino from 'pino';
import { createLogger } from '../api/logger.js';
import { loadConfig } from '../config/load.js';
import { checkId } from '../core/ids.js';
import { connectRemote, createProxyServer, mcpEndpoint } from '../mcp/proxy.js';
import { createMcpServer } from '../mcp/server.js';
import { compose } from '../runtime/compose.js';
import { serveStdio } from '../mcp/stdio.js';
import { addConfigOptions, configOptions } from './options.js';

interface McpOptions extends Record<string, unknown> {
  bank?: string;
  url?: string;
  apiKey?: string;
}

/** Forwards to a running server: the key's scopes apply there, and the database stays with that server. */
async function proxy(opts: McpOptions & { url: string }): Promise<void> {
  const endpoint = mcpEndpoint(opts.url).toString();
  const remote = await connectRemote({ url: opts.url, apiKey: opts.apiKey, bank: opts.bank }).catch(
    (err: unknown) => {
      throw new Error(`cannot use ${endpoint}: ${err instanceof Error ? err.message : String(err)}`);
    },
  );
  console.error(`mnemo mcp: proxying to ${endpoint}${opts.bank ? `, default bank '${opts.bank}'` : ''}`);
  await serveStdio(createProxyServer(remote));
  await remote.close();
}

/** Opens the configured store in this process, acting as the operator on project `default`. */
async function embedded(opts: McpOptions): Promise<void> {
  const config = loadConfig(configOptions(opts));
  // stdout is the protocol: logs go to stderr.
  const log = createLogger(config.logLevel, pino.destination(2));
  const runtime = await compose(config);
  const engine = config.databaseUrl ? 'postgres' : `embedded (${config.dataDir})`;
  console.error(
    `mnemo mcp: storage ${engine}, project default${opts.bank ? `, default bank '${opts.bank}'` : ''}`,
  );
  try {
    await serveStdio(
      createMcpServer({
        services: runtime.services,
        projectId: 'default',
        actor: { type: 'operator' },
        scopes: 'all',
        defaultBank: opts.bank,
        log,
      }),
    );
  } finally {
    await runtime.close();
  }
}

/** `mnemo mcp`: the MCP tools over stdio, for desktop agents (Claude Desktop, Cursor). */
export function registerMcpCommand(program: Command): void {
  addConfigOptions(
    program
      .command('mcp')
      .description(
        'serve the MCP tools over stdio; with --url (MNEMO_URL) forwards to a running server, else opens the store itself',
      )
      .option('--bank <id>', 'bank used when a tool call names none')
      .addOption(new Option('--url <url>', 'a running mnemo server to forward to').env('MNEMO_URL'))
      .addOption(
        new Option('--api-key <key>', 'API key with the mcp scope (or the operator token)').env(
          'MNEMO_API_KEY',
        ),
      ),
  ).action(async (opts: McpOptions) => {
    if (opts.bank !== undefined) checkId('bank id', opts.bank, 'bank');
    if (opts.url) await proxy({ ...opts, url: opts.url });
    else await embedded(opts);
    process.exit(0);
  });
}
