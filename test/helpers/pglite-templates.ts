/**
 * Where the embedded engine's data directory tarballs are kept (`test/helpers/engines.ts` builds
 * them): one per machine in the temporary directory, named by a digest of the PGlite version and
 * what the template holds, so a change to either makes a new one. Light to import, so that
 * `test/run.ts` can tell whether they exist before it starts the test processes.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { MIGRATIONS } from '../../src/store/migrations/index.js';

/** `empty`: initdb done, nothing migrated; `migrated`: every migration applied. */
export type TemplateName = 'empty' | 'migrated';

export function templateFile(name: TemplateName): string {
  const parts = name === 'migrated' ? MIGRATIONS.map((m) => [m.version, m.name, m.sql]) : [];
  const pgliteDir = dirname(dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')));
  const key = createHash('sha256')
    .update(readFileSync(join(pgliteDir, 'package.json')))
    .update(JSON.stringify(parts))
    .digest('hex')
    .slice(0, 16);
  return join(tmpdir(), `mnemo-test-pglite-${name}-${key}.tar`);
}
