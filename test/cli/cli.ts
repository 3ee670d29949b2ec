/** Runs the mnemo CLI as a child process, the way a user does: `node --import tsx src/cli/main.ts ...`. */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a CLI run: only the given MNEMO_* variables, none inherited. */
function envFor(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MNEMO_')) env[k] = v;
  return { ...env, ...vars };
}

/** Starts the CLI; the caller owns the process. */
export function spawnCli(args: string[], vars: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: ROOT,
    env: envFor(vars),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Collects a started CLI's output and exit code. */
export function finished(child: ChildProcess, input?: string): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  child.stdin?.end(input);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs the CLI to the end. */
export function runCli(args: string[], vars: Record<string, string>, input?: string): Promise<CliResult> {
  return finished(spawnCli(args, vars), input);
}
