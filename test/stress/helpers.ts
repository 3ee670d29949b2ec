/**
 * Real mnemo child processes for stress tests: `mnemo serve` and `mnemo worker` started through
 * the CLI (`node --import tsx src/cli/main.ts ...`), on a fixed port so a server killed with
 * SIGKILL can be started again at the same address, plus small HTTP helpers.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const ADMIN = 'stress-admin-token';

/** A port nothing listens on right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export interface MnemoChild {
  /** `http://127.0.0.1:<port>` for a server; '' for a worker. */
  url: string;
  child: ChildProcess;
  /** Everything the process wrote so far. */
  output(): string;
  /** Resolves with the exit code (or signal name) once the process is gone. */
  exited: Promise<number | string>;
  /** SIGKILL: no shutdown handler runs, in-flight work is cut where it stands. */
  kill9(): Promise<void>;
  /** SIGTERM and wait (a clean stop). */
  stop(): Promise<void>;
}

export interface ServeOptions {
  databaseUrl?: string;
  dataDir?: string;
  /** Run the operations worker in the server (default false: a separate `mnemo worker` runs them). */
  worker?: boolean;
  env?: Record<string, string>;
  /** How long to wait for the start-up line (the machine may be busy). */
  startTimeoutMs?: number;
}

function launch(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  timeoutMs: number,
): Promise<MnemoChild> {
  // As `npm start` runs it (docs/deploy.md, "Node's young generation").
  const child = spawn(
    process.execPath,
    ['--max-semi-space-size=64', '--import', 'tsx', 'src/cli/main.ts', ...args],
    {
      cwd: ROOT,
      env: { ...process.env, MNEMO_LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  const handle = (url: string): MnemoChild => ({
    url,
    child,
    output: () => out,
    exited,
    async kill9() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`mnemo ${args[0]} did not start within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = () => {
      const m = ready.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stderr!.off('data', onData);
      resolve(handle(m[1] ?? ''));
    };
    child.stderr!.on('data', onData);
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`mnemo ${args[0]} exited (${code}) before it was ready:\n${out}`));
    });
  });
}

/** Starts `mnemo serve` on PostgreSQL (`databaseUrl`) or the embedded engine (`dataDir`). */
export async function startServe(opts: ServeOptions): Promise<MnemoChild> {
  // Port 0: the server binds a free port itself and names it in its start-up line (a port
  // found free beforehand could be taken by another test before the server binds it).
  const args = ['serve', '--port', '0', '--admin-token', ADMIN];
  if (opts.databaseUrl) args.push('--database-url', opts.databaseUrl);
  if (opts.dataDir) args.push('--data-dir', opts.dataDir);
  if (!opts.worker) args.push('--no-worker');
  return launch(args, opts.env ?? {}, /mnemo listening on (http:\/\/\S+)/, opts.startTimeoutMs ?? 180_000);
}

/** Starts `mnemo worker` (operations only, no HTTP) on a PostgreSQL database. */
export function startWorkerProcess(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<MnemoChild> {
  return launch(['worker', '--database-url', databaseUrl], env, /mnemo worker (\S+) running/, 180_000).then(
    (w) => ({
      ...w,
      url: '',
    }),
  );
}

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

/**
 * A JSON request; `token` defaults to the operator token (`null` for none). Network failures
 * (a killed server) reject, as they would for a real client.
 */
export async function call(
  base: string,
  method: string,
  path: string,
  opts: { body?: unknown; token?: string | null; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...opts.headers };
  const token = opts.token === undefined ? ADMIN : opts.token;
  if (token) headers.authorization = `Bearer ${token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + path, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    signal: AbortSignal.timeout(opts.timeoutMs ?? 180_000),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {}
  return { status: res.status, headers: res.headers, body };
}

/** `/v1/default/banks/<encoded bank><rest>` */
export const bankPath = (bank: string, rest = '', base = '/v1/default') =>
  `${base}/banks/${encodeURIComponent(bank)}${rest}`;

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 120_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < until) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}

/** How many cycles to run: the quick count in `npm test`, the long one under `MNEMO_SOAK=1`. */
export const cycles = (quick: number, soak: number) => (process.env.MNEMO_SOAK ? soak : quick);

/** The "unhandled error" log lines of a child (each one is a 500 a client saw). */
export function unhandledErrors(c: MnemoChild): string[] {
  return c
    .output()
    .split('\n')
    .filter((l) => l.includes('"unhandled error"'));
}
