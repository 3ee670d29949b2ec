/**
 * What opening a fresh test store costs: the embedded engine from its migrated tarball
 * (`openTestStore('pglite')`, test/helpers/engines.ts), and a PostgreSQL database
 * (MNEMO_TEST_DATABASE_URL) made as `openTestStore('postgres')` makes one — a copy of the run's
 * migrated template (test/helpers/pg-template.ts) — beside the way it was made before: an empty
 * database, then every migration. `--n` opens and closes of each (default 10), interleaved,
 * after a warm-up; prints the median wall time of an open, this process's CPU, and the CPU of
 * the server processes that did the work (read from /proc by their pids: PostgreSQL must run on
 * this machine; background writers and the checkpointer are not counted).
 * Run: `MNEMO_TEST_DATABASE_URL=… npx tsx bench/test-stores.ts --n=10`.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { migrate } from '../src/store/migrate.js';
import { openPostgres } from '../src/store/postgres.js';
import pg from 'pg';
import { ENGINES, openTestStore } from '../test/helpers/engines.js';
import { dropRunTemplates, migratedPostgresTemplate } from '../test/helpers/pg-template.js';

type Rows = Record<string, string | number>[];

/** CPU milliseconds so far of the server process with this pid (same machine), or NaN. */
function backendCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, in 10 ms ticks
  } catch {
    return Number.NaN;
  }
}

/** Runs `sql` on a connection of its own to `url`; the server CPU it took. */
async function serverCpuOf(url: string, run: (q: (sql: string) => Promise<unknown>) => Promise<void>) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const pid = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const before = backendCpuMs(pid);
    await run((sql) => c.query(sql));
    return backendCpuMs(pid) - before;
  } finally {
    await c.end();
  }
}

/**
 * A PostgreSQL test database made as `openTestStore` makes one (`template`: copied from it, or
 * empty), migrated (a check only, on a copy) on one connection and dropped: its wall time to
 * open and the CPU of the server processes that did it.
 */
async function postgresStore(template: string | null): Promise<{ wall: number; server: number }> {
  const admin = process.env.MNEMO_TEST_DATABASE_URL!;
  const name = `mnemo_t_${randomBytes(6).toString('hex')}`;
  const t0 = performance.now();
  let server = await serverCpuOf(admin, async (q) => {
    await q(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${pg.escapeIdentifier(template)}` : ''}`);
  });
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const db = await openPostgres(url.toString(), { poolSize: 1 });
  const [{ pid }] = (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')) as [{ pid: number }];
  const before = backendCpuMs(pid);
  await migrate(db);
  server += backendCpuMs(pid) - before;
  const wall = performance.now() - t0;
  await db.close();
  server += await serverCpuOf(admin, async (q) => {
    await q(`DROP DATABASE ${name} WITH (FORCE)`);
  });
  return { wall, server };
}

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

type Opened = { wall: number; server: number };

export async function benchTestStores(argv: string[]): Promise<Rows> {
  const n = Number(argv.find((a) => a.startsWith('--n='))?.slice(4) ?? 10);
  const variants: { name: string; open: () => Promise<Opened> }[] = [
    {
      name: 'pglite, from its migrated tarball',
      open: async () => {
        const t0 = performance.now();
        const store = await openTestStore('pglite');
        const wall = performance.now() - t0;
        await store.dispose();
        return { wall, server: Number.NaN };
      },
    },
  ];
  if (ENGINES.includes('postgres')) {
    const template = await migratedPostgresTemplate();
    variants.push(
      { name: 'postgres, empty database migrated (before)', open: () => postgresStore(null) },
      { name: 'postgres, copy of the migrated template', open: () => postgresStore(template) },
    );
  }
  const measured = variants.map(() => ({ walls: [] as number[], cpu: 0, server: 0 }));
  try {
    for (const v of variants) await v.open(); // warm-up
    // Interleaved, so that the machine's load weighs on every variant alike.
    for (let i = 0; i < n; i++) {
      for (const [k, v] of variants.entries()) {
        const m = measured[k]!;
        const cpu0 = cpuMs();
        const { wall, server } = await v.open();
        m.walls.push(wall);
        m.cpu += cpuMs() - cpu0;
        m.server += server;
      }
    }
  } finally {
    await dropRunTemplates();
  }
  return variants.map((v, k) => {
    const m = measured[k]!;
    m.walls.sort((a, b) => a - b);
    return {
      store: v.name,
      opens: n,
      'median open, ms': Math.round(m.walls[Math.floor(n / 2)]!),
      'process CPU per open+close, ms': Math.round(m.cpu / n),
      'server CPU per open+close, ms': Number.isNaN(m.server) ? '-' : Math.round(m.server / n),
    };
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.table(await benchTestStores(process.argv.slice(2)));
}
