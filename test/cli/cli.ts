/**
 * Runs the mnemo CLI for tests: in-process through `run(argv, io)` from src/cli/main.ts (fast,
 * the default), or as a child process the way a user does (`node --import tsx src/cli/main.ts`)
 * where a test needs a real process (a signal, an exit code seen by a shell).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { run } from '../../src/cli/main.js';

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

/** A stream that keeps what is written to it. */
function collector(): { stream: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      done();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/** Runs the CLI in this process to the end; stdin is `input` (or empty, not a terminal). */
export async function runCli(
  args: string[],
  vars: Record<string, string>,
  input?: string,
): Promise<CliResult> {
  const stdout = collector();
  const stderr = collector();
  const stdin = Readable.from(input === undefined ? [] : [Buffer.from(input)]);
  const code = await run(args, { stdout: stdout.stream, stderr: stderr.stream, stdin, env: envFor(vars) });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** Starts the CLI as a child process; the caller owns the process. */
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

/** Runs the CLI as a child process to the end. */
export function runCliProcess(
  args: string[],
  vars: Record<string, string>,
  input?: string,
): Promise<CliResult> {
  return finished(spawnCli(args, vars), input);
}
