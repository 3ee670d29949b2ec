/**
 * `/docs` (Swagger UI) under a strict Content-Security-Policy: no inline or foreign script, no
 * framing. That the page still renders the reference under it is checked in headless Chromium
 * by docs-browser.slow.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

/** The directives of a CSP header, by name. */
function directives(csp: string | null): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of (csp ?? '').split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) out.set(name, values);
  }
  return out;
}

for (const engine of ENGINES) {
  describe(`/docs security headers (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(engine);
    });
    after(() => t.close());

    test('the page and its assets carry a strict CSP, nosniff and no framing', async () => {
      for (const path of [
        '/docs',
        '/docs/assets/init.js',
        '/docs/assets/swagger-ui-bundle.js',
        '/docs/assets/swagger-ui.css',
      ]) {
        const r = await t.call('GET', path, { token: null });
        assert.equal(r.status, 200, path);
        const csp = directives(r.headers.get('content-security-policy'));
        assert.deepEqual(csp.get('default-src'), ["'none'"], path);
        assert.deepEqual(csp.get('script-src'), ["'self'"], `${path}: no inline script, no eval, no CDN`);
        assert.deepEqual(csp.get('style-src'), ["'self'"], `${path}: no inline style`);
        assert.deepEqual(csp.get('frame-ancestors'), ["'none'"], path);
        assert.deepEqual(csp.get('base-uri'), ["'none'"], path);
        assert.deepEqual(csp.get('connect-src'), ["'self'"], path);
        assert.equal(r.headers.get('x-content-type-options'), 'nosniff', path);
      }
      const page = await t.call('GET', '/docs', { token: null });
      assert.doesNotMatch(
        page.body,
        /<script>(?!<\/script>)|<script(?![^>]*\bsrc=)[^>]*>/,
        'no inline script in the page',
      );
      assert.doesNotMatch(page.body, /https?:\/\//, 'nothing from another origin');
    });
  });
}
