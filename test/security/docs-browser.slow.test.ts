/**
 * `/docs` (Swagger UI) renders the reference under its strict Content-Security-Policy, in
 * Debian's headless Chromium: no CSP violation, no page error. Slow tier (a real server on a
 * new data directory and a browser: ~10 s of CPU and a minute of wall time on a loaded machine);
 * the headers themselves are checked in the fast tier by docs-csp.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/api/logger.js';
import { loadConfig } from '../../src/config/load.js';
import { type RunningServer, startServer } from '../../src/runtime/server.js';
import { CHROMIUM, launchChromium } from '../helpers/chromium.js';
import { seedDataDir } from '../helpers/engines.js';

describe('/docs in headless Chromium', {
  skip: existsSync(CHROMIUM) ? false : `no browser at ${CHROMIUM}`,
}, () => {
  let server: RunningServer;
  const dirs: string[] = [];
  before(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mnemo-docs-data-'));
    dirs.push(dataDir);
    await seedDataDir(dataDir, 'migrated'); // no initdb in a test
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
    const context = await launchChromium(profile);
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
      // Swagger UI draws a long reference as it is scrolled (past ~135 operations it starts with
      // the first ten): the first operations now, the last group's once scrolled to the end.
      await page.locator('.opblock').nth(4).waitFor({ timeout: 30_000 });
      const last = page.locator('.opblock-summary-path', { hasText: /^\/metrics$/ });
      for (let i = 0; i < 40 && (await last.count()) === 0; i++) {
        await page.mouse.wheel(0, 20_000);
        await new Promise((r) => setTimeout(r, 250));
      }
      assert.equal(await last.count(), 1, 'the operations are listed down to the last one');
      // expand one operation (the last, on screen now): its React-rendered body uses inline
      // styles and data: icons
      await last.click();
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
