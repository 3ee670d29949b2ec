/**
 * Runs every `*.test.ts` under src/, test/ and packages/ with node's test runner through tsx.
 * Node 20's `--test` does not expand globs, so the files are found here.
 * Arguments filter files by substring: `npm test -- store api`.
 */
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function find(dir: string, out: string[]): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) find(path, out);
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const filters = process.argv.slice(2);
const files = ['src', 'test', 'packages']
  .flatMap((d) => find(d, []))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  process.stderr.write('no test files matched\n');
  process.exit(1);
}
const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files],
  { stdio: 'inherit', env: { ...process.env, MNEMO_LOG_LEVEL: process.env.MNEMO_LOG_LEVEL ?? 'silent' } },
);
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
