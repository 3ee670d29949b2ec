#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Command, CommanderError } from 'commander';
import { createLogger } from '../api/logger.js';
import { compose } from '../runtime/compose.js';
import { exitWhenLost, startServer } from '../runtime/server.js';
import { loadConfig } from '../config/load.js';
import { AppError } from '../core/errors.js';
import { registerClientCommands } from './client/index.js';
import { registerKeyCommands } from './keys.js';
import { registerMasterKeyCommand } from './master-key.js';
import { registerMcpCommand } from './mcp.js';
import { CliExit, type CliIo, processIo, withIo } from './io.js';
import { registerMigrateCommand } from './migrate.js';
import { addConfigOptions, configOptions } from './options.js';

/** The whole command tree, fresh for each run (commander keeps parsed values on it). */
export function createProgram(io: CliIo): Command {
  const program = new Command('mnemo').description('mnemo: memory service for AI agents');
  // Settings copied to every command added below: commander's own errors and help go to `io`
  // and end the run with a code instead of the process.
  program
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });

  addConfigOptions(
    program.command('serve').description('run the HTTP server (and an operations worker)'),
  ).action(async (opts) => {
    const config = loadConfig(configOptions(opts));
    const log = createLogger(config.logLevel);
    const server = await startServer(config, log);
    const engine = config.databaseUrl ? 'postgres' : `embedded (${config.dataDir})`;
    log.info({ url: server.url, engine }, 'mnemo listening');
    console.error(`mnemo listening on ${server.url} — storage: ${engine}`);
    exitWhenLost(server, log, (code) => process.exit(code));
    const stop = async () => {
      await server.close();
      process.exit(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });

  addConfigOptions(
    program
      .command('worker')
      .description('run only an operations worker (no HTTP); needs PostgreSQL to share work'),
  ).action(async (opts) => {
    const config = loadConfig(configOptions(opts));
    const log = createLogger(config.logLevel);
    const runtime = await compose(config);
    const worker = runtime.startWorker(log);
    console.error(`mnemo worker ${worker.id} running`);
    const stop = async () => {
      await worker.stop();
      await runtime.close();
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
  return program;
}

/**
 * Runs the CLI with `argv` (without `node main.ts`) and resolves to its exit code. Tests call
 * it in-process with streams of their own; `mnemo serve`/`worker`/`mcp` resolve once started
 * and keep running. Operator commands that open the database (keys, master key) still print
 * through `console`.
 */
export async function run(argv: string[], io: CliIo = processIo()): Promise<number> {
  return withIo(io, async () => {
    try {
      await createProgram(io).parseAsync(argv, { from: 'user' });
    } catch (err) {
      if (err instanceof CliExit) throw err;
      if (err instanceof CommanderError) throw new CliExit(err.exitCode);
      const message = err instanceof AppError || err instanceof Error ? err.message : String(err);
      io.stderr.write(`mnemo: ${message}\n`);
      throw new CliExit(1);
    }
  }).catch((err: unknown) => {
    if (err instanceof CliExit) return err.code;
    throw err;
  });
}

const entry = process.argv[1] ? pathToFileURL(realpathSync(process.argv[1])).href : '';
if (import.meta.url === entry) {
  run(process.argv.slice(2)).then((code) => {
    // A failed run ends the process; a finished one lets open servers and streams drain.
    if (code !== 0) process.exit(code);
  });
}
