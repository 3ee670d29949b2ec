/**
 * The files every test process reads and, when missing, builds: the embedded engine's data
 * directory templates (`test/helpers/engines.ts`, ~5 s of CPU for initdb and the migrations)
 * and the local embedder's word vector cache (`src/embed/glove-cache.ts`, a few seconds). On a
 * fresh machine the first processes of a run would each build them at the same moment, so
 * `test/run.ts` checks for them first and, when one is missing, builds them here in one process
 * (`node --import tsx test/runner/caches.ts`) before it starts the tests.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../../src/config/load.js';
import { CACHE_FILE } from '../../src/embed/glove-cache.js';
import { templateFile } from '../helpers/pglite-templates.js';

function gloveDir(env: NodeJS.ProcessEnv): string {
  return loadConfig({}, env).cacheDir;
}

/** The cache files that are not there yet. */
export function missingCaches(env: NodeJS.ProcessEnv = process.env): string[] {
  const files = [templateFile('empty'), templateFile('migrated')];
  try {
    files.push(join(gloveDir(env), CACHE_FILE));
  } catch {
    // An invalid configuration in the environment: the tests that read it will say so.
  }
  return files.filter((f) => !existsSync(f));
}

async function buildCaches(): Promise<void> {
  const { migratedTemplate } = await import('../helpers/engines.js');
  const { openGloveCache } = await import('../../src/embed/glove-cache.js');
  await Promise.all([migratedTemplate(), openGloveCache(gloveDir(process.env))]);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await buildCaches();
