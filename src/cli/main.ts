#!/usr/bin/env node
import { Command } from 'commander';
import { createLogger } from '../api/logger.js';
import { createServices } from '../api/app.js';
import { attachWorker, startServer } from '../api/server.js';
import { loadConfig } from '../config/load.js';
import { AppError } from '../core/errors.js';
import { registerClientCommands } from './client/index.js';
import { registerKeyCommands } from './keys.js';
import { registerMasterKeyCommand } from './master-key.js';
import { registerMcpCommand } from './mcp.js';
import { registerMigrateCommand } from './migrate.js';
import { addConfigOptions, configOptions } from './options.js';

const program = new Command('mnemo').description('mnemo: memory service for AI agents');

addConfigOptions(program.command('serve').description('run the HTTP server (and an operations worker)')).action(
  async (opts) => {
    const config = loadConfig(configOptions(opts));
    const log = createLogger(config.logLevel);
    const server = await startServer(config, log);
    const engine = config.databaseUrl ? 'postgres' : `embedded (${config.dataDir})`;
    log.info({ url: server.url, engine }, 'mnemo listening');
    console.error(`mnemo listening on ${server.url} — storage: ${engine}`);
    const stop = async () => {
      await server.close();
      process.exit(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  },
);

addConfigOptions(
  program.command('worker').description('run only an operations worker (no HTTP); needs PostgreSQL to share work'),
).action(async (opts) => {
  const config = loadConfig(configOptions(opts));
  const log = createLogger(config.logLevel);
  const services = await createServices(config);
  const worker = attachWorker(services, log);
  console.error(`mnemo worker ${worker.id} running`);
  const stop = async () => {
    await worker.stop();
    await services.store.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
});

registerMigrateCommand(program);
registerKeyCommands(program);
registerMasterKeyCommand(program);
registerClientCommands(program);
registerMcpCommand(program);

program.parseAsync().catch((err: unknown) => {
  const message = err instanceof AppError || err instanceof Error ? err.message : String(err);
  console.error(`mnemo: ${message}`);
  process.exit(1);
});
