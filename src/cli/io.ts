/**
 * Where a CLI run reads and writes: the process's streams and environment, or, when a test
 * calls `run(argv, io)` from main.ts in-process, streams of its own. The client commands ask
 * `cliIo()` instead of touching `process.stdout`/`console`/`process.env`, so the same code
 * serves both. The io travels with the run in an AsyncLocalStorage, so command modules need
 * no extra parameter.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Writable } from 'node:stream';

export interface CliIo {
  stdout: Writable & { isTTY?: boolean; columns?: number };
  stderr: Writable & { isTTY?: boolean };
  stdin: AsyncIterable<Buffer | string> & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

/** The real process. */
export const processIo = (): CliIo => ({
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
});

interface RunState {
  io: CliIo;
  exitCode: number;
}

const current = new AsyncLocalStorage<RunState>();

/** Runs `fn` as one CLI run with `io`; resolves to the exit code the commands set. */
export async function withIo(io: CliIo, fn: () => Promise<unknown>): Promise<number> {
  const state: RunState = { io, exitCode: 0 };
  await current.run(state, fn);
  return state.exitCode;
}

/** The io of the running command (the process's outside a run). */
export const cliIo = (): CliIo => current.getStore()?.io ?? processIo();

/** Sets the exit code of the running command without ending it. */
export function setExitCode(code: number): void {
  const state = current.getStore();
  if (state) state.exitCode = code;
  else process.exitCode = code;
}

/** Ends the running command with an exit code (caught by `run`, which returns it). */
export class CliExit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** One line on the command's stdout / stderr. */
export const out = (line: string) => cliIo().stdout.write(`${line}\n`);
export const err = (line: string) => cliIo().stderr.write(`${line}\n`);
