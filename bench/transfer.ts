/**
 * `mnemo import` and `mnemo export` as a user runs them (child processes over HTTP) against a
 * listening server (PGlite in memory, local embedder): import N plain Retain items (default
 * 10,000) at batch sizes 100 and 500, export the bank, import the export into a new bank. Wall
 * time includes the CLI's start-up; the import rate is the CLI's own, measured from its first
 * batch. The operations worker is off unless `worker` is given, so the numbers are those of the
 * import path and not of the consolidation that each Retain queues.
 * Run: `npx tsx bench/transfer.ts [items] [worker]`.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../src/api/logger.js';
import { startServer } from '../src/runtime/server.js';
import { loadConfig } from '../src/config/load.js';
import { openStore } from '../src/store/open.js';
import { chatLine } from './retain.js';

const N = Number(process.argv[2] ?? 10_000);
const WORKER = process.argv[3] === 'worker';
const config = loadConfig({ logLevel: 'silent', port: 0, worker: WORKER }, {});
const store = await openStore({});
const server = await startServer(config, createLogger('silent'), { store });
const dir = await mkdtemp(join(tmpdir(), 'mnemo-bench-transfer-'));

function cli(args: string[]): Promise<{ seconds: number; stdout: string }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      env: { ...process.env, MNEMO_URL: server.url },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0
        ? resolve({ seconds: (performance.now() - started) / 1000, stdout })
        : reject(new Error(`mnemo ${args[0]} exited ${code}`)),
    );
  });
}

const rows: { step: string; items: number; wall: string; rate: string }[] = [];
try {
  const items = join(dir, 'items.jsonl');
  await writeFile(
    items,
    Array.from({ length: N }, (_, i) =>
      JSON.stringify({
        content: chatLine(i),
        timestamp: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
      }),
    ).join('\n'),
  );
  const startup = await cli(['--help']);
  rows.push({ step: 'CLI start-up (mnemo --help)', items: 0, wall: startup.seconds.toFixed(1), rate: '' });
  for (const batch of [100, 500]) {
    const r = await cli([
      'import',
      items,
      '--bank',
      `plain-${batch}`,
      '--batch-size',
      String(batch),
      '--restart',
      '--json',
    ]);
    const rate = JSON.parse(r.stdout).items_per_second as number;
    rows.push({
      step: `import plain items, batch ${batch}`,
      items: N,
      wall: r.seconds.toFixed(1),
      rate: String(rate),
    });
  }
  const exported = join(dir, 'export.jsonl');
  const e = await cli(['export', '--bank', 'plain-100', '-o', exported]);
  const size = (await stat(exported)).size / 1e6;
  rows.push({
    step: `export (${size.toFixed(1)} MB)`,
    items: N,
    wall: e.seconds.toFixed(1),
    rate: (N / e.seconds).toFixed(0),
  });
  const r = await cli(['import', exported, '--bank', 'copy', '--json']);
  rows.push({
    step: 'import the export, batch 100',
    items: N,
    wall: r.seconds.toFixed(1),
    rate: String(JSON.parse(r.stdout).items_per_second),
  });
} finally {
  await server.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
}

console.log(
  `\nmnemo import/export, ${N} items, PGlite in memory, local embedder, worker ${WORKER ? 'on' : 'off'}\n`,
);
console.log('| step | items | wall s | items/s |');
console.log('|---|---|---|---|');
for (const r of rows) console.log(`| ${r.step} | ${r.items || ''} | ${r.wall} | ${r.rate} |`);
