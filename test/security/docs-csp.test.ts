/**
 * `/docs` (Swagger UI) under a strict Content-Security-Policy: no inline or foreign script, no
 * framing, and the page still renders the reference (checked in headless Chromium when present).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { createLogger } from '../../src/api/logger.js';
import { type RunningServer, startServer } from '../../src/runtime/server.js';
import { loadConfig } from '../../src/config/load.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';

const CHROMIUM = '/usr/bin/chromium';

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

describe('/docs in headless Chromium', {
  skip: existsSync(CHROMIUM) ? false : `no browser at ${CHROMIUM}`,
}, () => {
  let server: RunningServer;
  const dirs: string[] = [];
  before(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mnemo-docs-data-'));
    dirs.push(dataDir);
    const config = loadConfig(
      { adminToken: 'docs-t', port: 0, host: '127.0.0.1', dataDir, logLevel: 'silent', worker: false },
      {},
    );
    server = await startServer(config, createLogger('silent'));
  });
  after(async () => {
    await server?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test('Swagger UI renders the reference with no CSP violation and no page error', async () => {
    const profile = mkdtempSync(join(tmpdir(), 'mnemo-docs-chromium-'));
    dirs.push(profile);
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
      ],
    });
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      const problems: string[] = [];
      page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
      page.on('console', (msg) => {
        // a failed load is reported with its URL below
        if (msg.text().startsWith('Failed to load resource')) return;
        if (msg.type() === 'error' || /Content Security Policy/i.test(msg.text())) problems.push(msg.text());
      });
      page.on('response', (r) => {
        // the browser asks for /favicon.ico on its own; mnemo has none
        if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) problems.push(`${r.status()} ${r.url()}`);
      });
      await page.addInitScript(() => {
        document.addEventListener('securitypolicyviolation', (e) => {
          console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`);
        });
      });
      await page.goto(`${server.url}/docs`);
      await page
        .locator('.swagger-ui .info .title')
        .filter({ hasText: 'mnemo' })
        .waitFor({ timeout: 30_000 });
      assert.ok((await page.locator('.opblock').count()) > 10, 'the operations are listed');
      // expand one operation: its React-rendered body uses inline styles and data: icons
      await page.locator('.opblock-summary').first().click();
      await page.locator('.opblock-body').first().waitFor();
      await page.waitForTimeout(300);
      assert.deepEqual(problems, []);
      // the probe works: an image from elsewhere is a reported violation, not a load
      await page.evaluate(() => {
        const img = document.createElement('img');
        img.src = 'https://evil.example/x.png';
        document.body.append(img);
      });
      await page.waitForTimeout(300);
      assert.ok(
        problems.some((p) => /CSP violation: img-src https:\/\/evil\.example/.test(p)),
        problems.join('\n'),
      );
    } finally {
      await context.close();
    }
  });
});
