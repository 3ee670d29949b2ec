#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so `npx mnemo` and `npm link` work without a build step.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsx = require.resolve('tsx/cli');
const r = spawnSync(process.execPath, [tsx, join(root, 'src/cli/main.ts'), ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(r.status ?? 1);
