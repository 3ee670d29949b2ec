import type { Command } from 'commander';
import { APIConnectionError, Mnemo, MnemoError } from '../../../packages/client/src/index.js';
import { CliExit, cliIo, err } from '../io.js';

/** Options every client command takes. */
export interface ConnectionOptions {
  url?: string;
  apiKey?: string;
  adminToken?: string;
  json?: boolean;
}

/** Adds `--url`, `--api-key`, `--admin-token` and `--json` to a command. */
export function withConnection(cmd: Command): Command {
  return cmd
    .option('--url <url>', 'server URL (MNEMO_URL, default http://127.0.0.1:8888)')
    .option('--api-key <key>', 'project API key, for /v1/me (MNEMO_API_KEY)')
    .option('--admin-token <token>', 'operator token, for /v1/default (MNEMO_ADMIN_TOKEN)')
    .option('--json', 'print JSON for scripts instead of tables');
}

/**
 * The client for these options. A flag wins over the environment; an API key wins over the
 * operator token when both come from the same place. With neither, `/v1/default` without a
 * token (a loopback server without MNEMO_ADMIN_TOKEN).
 */
export function connect(opts: ConnectionOptions, env: NodeJS.ProcessEnv = cliIo().env): Mnemo {
  const baseUrl = opts.url ?? env.MNEMO_URL ?? undefined;
  if (opts.apiKey) return new Mnemo({ baseUrl, apiKey: opts.apiKey });
  if (opts.adminToken) return new Mnemo({ baseUrl, adminToken: opts.adminToken });
  if (env.MNEMO_API_KEY) return new Mnemo({ baseUrl, apiKey: env.MNEMO_API_KEY });
  return new Mnemo({ baseUrl, adminToken: env.MNEMO_ADMIN_TOKEN || undefined });
}

/** One line for a failed call: code, message, the missing scope and the request id to quote. */
export function describeError(err: unknown): string {
  if (!(err instanceof MnemoError)) return err instanceof Error ? err.message : String(err);
  const parts = [err.status ? `${err.code} (${err.status}): ${err.message}` : err.message];
  const scope = (err as { requiredScope?: string }).requiredScope;
  if (scope) parts.push(`the key needs scope '${scope}'`);
  for (const d of err.details ?? [])
    if (!err.message.includes(d.message)) parts.push(`${d.path}: ${d.message}`);
  if (err.requestId) parts.push(`request ${err.requestId}`);
  return parts.join(' — ');
}

/**
 * Wraps a command action: client errors print one readable line on stderr and exit 1
 * (2 for a refused connection, so scripts can tell "server down" from "bad request").
 */
export function action<A extends unknown[]>(
  fn: (...args: A) => Promise<void>,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (e) {
      if (e instanceof CliExit) throw e;
      err(`mnemo: ${describeError(e)}`);
      throw new CliExit(e instanceof APIConnectionError ? 2 : 1);
    }
  };
}
