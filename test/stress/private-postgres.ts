/**
 * A private PostgreSQL cluster for tests that stop and start the database server: the machine's
 * shared PostgreSQL is never restarted. `initdb` + `pg_ctl` from the installed PostgreSQL, in a
 * temporary directory, on a free port, run as the `postgres` user when this process is root
 * (PostgreSQL refuses to run as root). pgvector comes from the system's extension directory.
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './helpers.js';

const run = promisify(execFile);

export interface PrivatePostgres {
  url: string;
  /** Stops the server: `immediate` is a crash (no checkpoint; recovery replays the WAL on start). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its directory. */
  destroy(): Promise<void>;
}

function binDir(): string | null {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  const majors = readdirSync(base)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  for (const m of majors) if (existsSync(join(base, m, 'bin', 'initdb'))) return join(base, m, 'bin');
  return null;
}

/**
 * Creates and starts a cluster; resolves with null and the reason when it cannot (no
 * PostgreSQL binaries, no `postgres` user to run them as, initdb refused).
 */
export async function startPrivatePostgres(): Promise<{ pg: PrivatePostgres } | { reason: string }> {
  const bin = binDir();
  if (!bin) return { reason: 'no PostgreSQL server binaries under /usr/lib/postgresql' };
  const root = userInfo().uid === 0;
  let owner: { uid: number; gid: number } | null = null;
  if (root) {
    try {
      const { stdout } = await run('id', ['-u', 'postgres']);
      const { stdout: g } = await run('id', ['-g', 'postgres']);
      owner = { uid: Number(stdout.trim()), gid: Number(g.trim()) };
    } catch {
      return { reason: 'running as root and there is no postgres user to run a private cluster as' };
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-pg-'));
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const data = join(dir, 'data');
  const port = await freePort();
  const as = (cmd: string, args: string[]) =>
    root ? run('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]) : run(join(bin, cmd), args);
  const options = `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories=${dir} -c max_connections=60 -c shared_buffers=32MB`;
  const pg: PrivatePostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop(mode = 'fast') {
      await as('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
    },
    async start() {
      await as('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '120', 'start']);
    },
    async destroy() {
      await pg.stop('immediate').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await as('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    await pg.start();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return { reason: `could not start a private PostgreSQL: ${(err as Error).message.split('\n')[0]}` };
  }
  return { pg };
}
