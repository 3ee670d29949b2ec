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

/**
 * The page cache (shared_buffers) of a test's embedded database, in MB: the smallest the
 * configuration allows (MNEMO_EMBEDDED_CACHE_MB). The engine zeroes its whole cache as it starts:
 * with PGlite's 128 MB that was ~1.1 s of the ~1.8 s of CPU a new test database cost, for banks
 * of a few hundred rows. Tests of the cache itself give their own size.
 */
export const TEST_CACHE_MB = 16;

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

/**
 * A template's tarball as the Blob PGlite loads a data directory from (`loadDataDir`), which it
 * reads whole with `arrayBuffer()` at every database opened: Node 20 reads a Blob in 64 KB chunks
 * and joins them, ~0.4 s of CPU for the 42 MB template (a copy of it ~0.2 s). This one hands out
 * the bytes it was made from: PGlite only reads them (untars them into its file system, which
 * copies each file), as `pglite-templates.test.ts` checks.
 */
export class TemplateTarball extends Blob {
  readonly #bytes: ArrayBuffer;

  constructor(bytes: Uint8Array<ArrayBuffer>) {
    super([bytes], { type: 'application/x-tar' });
    // A Buffer may be a window on a larger one: only then copied, once.
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    this.#bytes = whole ? bytes.buffer : bytes.slice().buffer;
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    return this.#bytes;
  }
}
