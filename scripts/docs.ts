/**
 * `npm run docs`: rewrites the generated regions of the docs (error codes, scopes, CLI flags,
 * settings) from the code. `npm run docs -- --check` only reports stale regions (exit 1).
 * test/docs/generated.test.ts fails while any region is stale.
 */
import { REGIONS } from './docs/index.js';
import { renderAll, writeAll } from './docs/regions.js';

if (process.argv.includes('--check')) {
  const stale = renderAll(REGIONS).flatMap((f) => f.stale.map((name) => `${f.file}: ${name}`));
  for (const s of stale) console.error(`stale: ${s}`);
  if (stale.length) {
    console.error('run `npm run docs` to rewrite them');
    process.exit(1);
  }
} else {
  const written = writeAll(REGIONS);
  console.log(written.length ? `rewrote ${written.join(', ')}` : 'every generated region is up to date');
}
