import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Hono } from 'hono';
import type { AppEnv } from './env.js';

const require = createRequire(import.meta.url);
const SWAGGER_DIR = dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
};

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>mnemo API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="ui"></div><script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script></body></html>`;

// validatorUrl: null — the default badge loads an image from validator.swagger.io.
const INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#ui', deepLinking: true, validatorUrl: null });`;

/**
 * Strict policy for the reference page: code, styles and data only from this origin, nothing
 * inline, no framing. Swagger UI (React) sets styles through the DOM, which CSP allows; its icons
 * are `data:` SVGs. `test/security/docs-csp.test.ts` renders it in Chromium under this policy.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const headers = (type: string, extra: Record<string, string> = {}) => ({
  'content-type': type,
  'content-security-policy': DOCS_CSP,
  'x-content-type-options': 'nosniff',
  ...extra,
});

/** `/docs`: Swagger UI over `/openapi.json`, served from the npm package (no CDN). */
export const docsRoutes = new Hono<AppEnv>()
  .get('/', (c) => c.body(PAGE, 200, headers('text/html; charset=utf-8')))
  .get('/assets/init.js', (c) => c.body(INIT, 200, headers('application/javascript; charset=utf-8')))
  .get('/assets/:file', async (c) => {
    const file = c.req.param('file');
    const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
    if (!type) return c.notFound();
    const body = await readFile(join(SWAGGER_DIR, file));
    return c.body(body, 200, headers(type, { 'cache-control': 'public, max-age=86400' }));
  });
