#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so `npx mnemo` and `npm link` work without a build step.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// A young generation of 64 MB (V8's default is 16): a busy server's garbage collection costs less
// than half as much (docs/deploy.md, "Node's young generation"); `npm start` passes the same. tsx
// is loaded into this one process (`--import`), so that the flags apply to it.
const flags = ['--max-semi-space-size=64', '--import', import.meta.resolve('tsx')];
const r = spawnSync(process.execPath, [...flags, join(root, 'src/cli/main.ts'), ...process.argv.slice(2)], {
  stdio: 'inherit',
});
process.exit(r.status ?? 1);
