import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import type { AppEnv } from '../api/env.js';
import { VOCABULARY_MODULE } from './vocabulary.js';

const ASSET_DIR = fileURLToPath(new URL('./assets/', import.meta.url));
const INDEX = fileURLToPath(new URL('./index.html', import.meta.url));

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * Strict policy: scripts, styles and data only from this origin; no inline code, no framing.
 * The app builds its DOM with createElement, so nothing needs `unsafe-inline`.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Every file under assets/, by its path relative to that folder: the only files served. */
function listAssets(dir: string, out = new Map<string, string>()): Map<string, string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) listAssets(path, out);
    else if (TYPES[extname(entry.name)]) out.set(relative(ASSET_DIR, path).split('\\').join('/'), path);
  }
  return out;
}

const ASSETS = listAssets(ASSET_DIR);

const headers = (type: string) => ({
  'content-type': type,
  'content-security-policy': CONSOLE_CSP,
  // Small files, read fresh: a restarted server serves its own version at once.
  'cache-control': 'no-cache',
});

const page = async () => readFile(INDEX, 'utf8');

/** `/console`: the single-page web console (static HTML, CSS and ES modules; no CDN, no build). */
export const consoleRoutes = new Hono<AppEnv>()
  .get('/', async (c) => c.body(await page(), 200, headers('text/html; charset=utf-8')))
  // The contract's words, from src/contract (vocabulary.ts): the console restates none of them.
  .get('/assets/vocabulary.js', (c) => c.body(VOCABULARY_MODULE, 200, headers(TYPES['.js']!)))
  .get('/assets/*', async (c) => {
    const name = c.req.path.slice(c.req.path.indexOf('/assets/') + '/assets/'.length);
    const file = ASSETS.get(name);
    if (!file) return c.notFound();
    return c.body(await readFile(file), 200, headers(TYPES[extname(file)]!));
  })
  // `/console/` -> `/console` (the path always starts with the mount point, so this stays on site).
  .get('/*', (c) => (c.req.path.endsWith('/') ? c.redirect(c.req.path.replace(/\/+$/, '')) : c.notFound()));
