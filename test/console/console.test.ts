/**
 * The web console end to end: a real mnemo server (in process, embedded engine in a temp data
 * directory) driven through Debian's Chromium by playwright-core. Screenshots of the main
 * pages go to MNEMO_SCREENSHOTS_DIR (docs/screenshots to refresh the README's) or a temp dir.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { createLogger } from '../../src/api/logger.js';
import { CONSOLIDATE } from '../../src/core/consolidate/schedule.js';
import { enqueueOperation } from '../../src/core/operations.js';
import { type RunningServer, startServer } from '../../src/runtime/server.js';
import { loadConfig } from '../../src/config/load.js';
import { CHROMIUM, launchChromium } from '../helpers/chromium.js';
import { seedDataDir } from '../helpers/engines.js';

const ADMIN = 'console-test-admin-token';
const BANK = 'alice@example.com';
const skip = existsSync(CHROMIUM)
  ? false
  : `no browser at ${CHROMIUM}: install Debian's chromium package (apt-get install -y chromium; .ci/run does)`;

describe('web console in headless Chromium', { skip }, () => {
  let server: RunningServer;
  let context: BrowserContext;
  let page: Page;
  const dirs: string[] = [];
  const problems: string[] = [];
  const shots = resolve(process.env.MNEMO_SCREENSHOTS_DIR ?? mkdtempSync(join(tmpdir(), 'mnemo-shots-')));

  /** A JSON request from the test itself (not the browser). */
  async function call(method: string, path: string, body?: unknown, token: string | null = ADMIN) {
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }

  const shot = async (name: string) => {
    // Toasts of earlier steps would cover the picture.
    await page.evaluate(() => {
      const toast = document.getElementById('status');
      if (toast) toast.hidden = true;
    });
    await page.screenshot({ path: join(shots, `${name}.png`) });
  };

  const bankHash = (tab = '') => `#/banks/${encodeURIComponent(BANK)}${tab ? `/${tab}` : ''}`;

  async function signIn(token: string) {
    await page.goto(`${server.url}/console`);
    await page.getByLabel('Operator token or project API key').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  /** Waits until the (only) pager on the page has its page. */
  const settled = () => page.locator('.page-body[aria-busy="false"]').waitFor();

  /** Waits for a playground's outcome; a server error fails with its message instead of a timeout. */
  async function outcome(selector: string) {
    const done = page.locator(`${selector}, main [role=alert]`).first();
    await done.waitFor();
    const alert = page.locator('main [role=alert]');
    if (await alert.count()) assert.fail(`the page shows an error: ${await alert.first().textContent()}`);
  }

  before(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mnemo-console-data-'));
    const profile = mkdtempSync(join(tmpdir(), 'mnemo-console-chromium-'));
    dirs.push(dataDir, profile);
    mkdirSync(shots, { recursive: true });
    await seedDataDir(dataDir, 'migrated'); // no initdb in a test
    const config = loadConfig(
      { adminToken: ADMIN, port: 0, host: '127.0.0.1', dataDir, logLevel: 'silent' },
      {},
    );
    server = await startServer(config, createLogger('silent'));
    context = await launchChromium(profile, {
      args: ['--disable-component-update', '--disable-sync'],
      viewport: { width: 1280, height: 900 },
      colorScheme: 'light',
    });
    context.setDefaultTimeout(20_000);
    page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (msg) => {
      // Failed API calls are expected (401 on a bad token, 404 probes); anything else is a defect.
      if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource'))
        problems.push(msg.text());
    });
    page.on('dialog', (d) => d.accept());

    // Memories to browse: 5 with entities and tags, 55 log lines in one document.
    const items = [
      {
        content: 'Alice adopted a beagle named Pepper',
        timestamp: '2024-05-08T13:56:00Z',
        tags: ['pets'],
        document_id: 'chat-1',
        entities: [
          { text: 'Alice', type: 'PERSON' },
          { text: 'Pepper', type: 'ANIMAL' },
        ],
      },
      {
        content: "Pepper loves the park near Alice's flat in Lyon",
        tags: ['pets'],
        entities: [
          { text: 'Alice', type: 'PERSON' },
          { text: 'Pepper', type: 'ANIMAL' },
          { text: 'Lyon', type: 'PLACE' },
        ],
      },
      {
        content: 'Alice works as a nurse at the hospital in Lyon',
        tags: ['work'],
        entities: [
          { text: 'Alice', type: 'PERSON' },
          { text: 'Lyon', type: 'PLACE' },
        ],
      },
      { content: 'Alice prefers tea over coffee', entities: [{ text: 'Alice', type: 'PERSON' }] },
      {
        content: "Bob is Alice's brother and lives in Paris",
        entities: [
          { text: 'Alice', type: 'PERSON' },
          { text: 'Bob', type: 'PERSON' },
          { text: 'Paris', type: 'PLACE' },
        ],
      },
    ];
    const log = Array.from({ length: 55 }, (_, i) => ({
      content: `Log ${i + 1}: Alice walked ${i + 1} kilometres along the river`,
      tags: ['log'],
      document_id: 'walks',
      entities: [{ text: 'Alice', type: 'PERSON' }],
    }));
    // Without background consolidation, so the bank holds exactly what the test retained.
    const bank = await call('PUT', `/v1/default/banks/${encodeURIComponent(BANK)}`, {
      name: 'Alice',
      mission: 'Remember what Alice tells the support assistant',
      enable_observations: false,
    });
    assert.equal(bank.status, 200, JSON.stringify(bank.body));
    const r = await call('POST', `/v1/default/banks/${encodeURIComponent(BANK)}/memories`, {
      items: [...log, ...items],
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.memories_created, 60);
    // Background work a Retain starts (consolidation) settles before pages are compared with the API.
    const ops = `/v1/default/banks/${encodeURIComponent(BANK)}/operations`;
    for (let i = 0; i < 120; i++) {
      const busy = await Promise.all(
        ['pending', 'processing'].map((st) => call('GET', `${ops}?status=${st}`)),
      );
      if (busy.every((b) => b.status !== 200 || b.body.items.length === 0)) break;
      await new Promise((res) => setTimeout(res, 250));
    }
  });

  after(async () => {
    await context?.close();
    await server?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test('serves the app from /console with a strict CSP and no inline script', async () => {
    const res = await fetch(`${server.url}/console`);
    assert.equal(res.status, 200);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    const html = await res.text();
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'inline script');
    assert.doesNotMatch(html, /https?:\/\//, 'nothing from another origin');
    const js = await fetch(`${server.url}/console/assets/app.js`);
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type') ?? '', /javascript/);
    assert.equal((await fetch(`${server.url}/console/assets/..%2froutes.ts`)).status, 404);
    const slash = await fetch(`${server.url}/console/`, { redirect: 'manual' });
    assert.equal(slash.status, 302);
    assert.equal(slash.headers.get('location'), '/console');
  });

  test('sign in: a wrong token is refused, the operator token opens Projects', async () => {
    await signIn('not-the-token');
    await page.getByRole('alert').filter({ hasText: 'not accepted' }).waitFor();
    await page.screenshot({ path: join(shots, 'signin.png') });
    await page.getByLabel('Operator token or project API key').fill(ADMIN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Projects' }).waitFor();
    assert.equal(await page.evaluate(() => location.hash), '#/projects');
    // The list arrives after the heading: wait for it (isVisible does not wait).
    await page.getByRole('link', { name: 'default' }).waitFor();
  });

  test('create a project, mint a key, use it on /v1/me, revoke it: 401', async () => {
    await page.getByLabel('Project id').fill('acme-co');
    await page.getByLabel('Name', { exact: true }).fill('Acme Co');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByRole('heading', { level: 1, name: 'acme-co' }).waitFor();
    assert.equal((await call('GET', '/v1/default/projects/acme-co')).body.name, 'Acme Co');

    await page.getByLabel('Name', { exact: true }).fill('support-bot');
    await page.getByRole('checkbox', { name: /^admin/ }).check();
    await page.getByRole('button', { name: 'Mint key' }).click();
    const secret = page.getByRole('textbox', { name: 'New API key' });
    await secret.waitFor();
    const key = await secret.inputValue();
    assert.match(key, /^mk_/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await shot('keys');

    // The key works on /v1/me from outside the browser, with the scopes chosen.
    const retained = await call(
      'POST',
      '/v1/me/banks/bot-notes/memories',
      { items: [{ content: 'Acme ships on Fridays' }] },
      key,
    );
    assert.equal(retained.status, 200);
    const listed = await call('GET', '/v1/me/banks', undefined, key);
    assert.deepEqual(
      listed.body.items.map((b: any) => b.id),
      ['bot-notes'],
    );
    const keys = (await call('GET', '/v1/default/projects/acme-co/keys')).body.items;
    assert.deepEqual(keys[0].scopes.sort(), ['admin', 'recall', 'retain']);

    // A key with admin signs in to the console on /v1/me and sees its project's banks.
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(key);
    await page.getByRole('heading', { level: 1, name: 'Banks' }).waitFor();
    await page.getByRole('link', { name: 'bot-notes' }).waitFor();
    assert.equal(
      await page.getByRole('link', { name: 'Projects' }).count(),
      0,
      'no project management with a key',
    );
    await page.getByRole('button', { name: 'Sign out' }).click();

    await signIn(ADMIN);
    await page.goto(`${server.url}/console#/projects/acme-co`);
    await page.getByRole('button', { name: /^Revoke key support-bot/ }).click();
    await page.getByRole('cell', { name: 'revoked' }).waitFor();
    assert.equal((await call('GET', '/v1/me/banks', undefined, key)).status, 401);

    // A key limited to some banks: the form's Banks field, shown in the key table.
    await page.getByLabel('Name', { exact: true }).fill('user-42');
    await page.getByLabel('Banks (optional)').fill('user-42/*, alice');
    await page.getByRole('button', { name: 'Mint key' }).click();
    const scoped = await page.getByRole('textbox', { name: 'New API key' }).inputValue();
    assert.match(scoped, /^mk_/);
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('cell', { name: /user-42\/\*.*alice/ }).waitFor();
    const minted = (await call('GET', '/v1/default/projects/acme-co/keys')).body.items;
    assert.deepEqual(minted.find((k: any) => k.name === 'user-42').banks, ['user-42/*', 'alice']);
    assert.equal((await call('GET', '/v1/me/banks/bot-notes', undefined, scoped)).status, 404);
  });

  test('browse memories: server pages, filters, delete', async () => {
    const memoriesUrl = `/v1/default/banks/${encodeURIComponent(BANK)}/memories`;
    /** What the API answers for a query: the page must show exactly this. */
    const expected = async (query: string) =>
      (await call('GET', `${memoriesUrl}?${query}`)).body.items.map((m: any) => m.text) as string[];
    const shown = () =>
      page
        .locator('.table-wrap[aria-label="Memories"] td[data-label="Memory"] .memory-text')
        .allTextContents();

    await page.goto(`${server.url}/console#/banks`);
    await page.getByRole('link', { name: BANK }).click();
    await page.getByRole('heading', { level: 1, name: BANK }).waitFor();
    await shot('bank');
    await page.getByRole('link', { name: 'Memories', exact: true }).click();
    await settled();
    const first = await expected('limit=50');
    assert.equal(first.length, 50);
    assert.deepEqual(await shown(), first);
    await shot('memories');
    const total = (await call('GET', `/v1/default/banks/${encodeURIComponent(BANK)}`)).body.memory_count;
    assert.ok(total > 50 && total <= 100, `${total}`);
    await page.getByRole('button', { name: 'Next →' }).click();
    await settled();
    assert.ok(await page.getByText('Page 2').isVisible());
    const second = await shown();
    assert.equal(second.length, total - 50);
    assert.deepEqual([...first, ...second], await expected('limit=100'));
    assert.ok(await page.getByRole('button', { name: 'Next →' }).isDisabled());
    await page.getByRole('button', { name: '← Previous' }).click();
    await settled();
    assert.deepEqual(await shown(), first);

    const filterBy = async (fill: () => Promise<unknown>, query: string, mustShow: string) => {
      await page.getByRole('button', { name: 'Clear' }).click();
      await settled();
      await fill();
      await page.getByRole('button', { name: 'Apply' }).click();
      await settled();
      const rows = await shown();
      assert.ok(rows.includes(mustShow), `${query}: ${rows.join(' | ')}`);
      assert.deepEqual(rows, await expected(query), query);
      return rows;
    };
    await filterBy(
      () => page.getByLabel('Text contains').fill('beagle'),
      'q=beagle&limit=50',
      'Alice adopted a beagle named Pepper',
    );
    const pets = await filterBy(
      async () => {
        await page.getByLabel('Tags', { exact: true }).fill('pets');
        await page.getByLabel('Tags match').selectOption('any_strict');
      },
      'tags=pets&tags_match=any_strict&limit=50',
      "Pepper loves the park near Alice's flat in Lyon",
    );
    assert.ok(!pets.some((t) => t.startsWith('Log ')), 'any_strict leaves out memories without the tag');
    await filterBy(
      () => page.getByLabel('Document id').fill('chat-1'),
      'document_id=chat-1&limit=50',
      'Alice adopted a beagle named Pepper',
    );
    await filterBy(
      () => page.getByLabel('Type').selectOption('preference'),
      'type=preference&limit=50',
      'Alice prefers tea over coffee',
    );

    const before = await filterBy(
      () => page.getByLabel('Text contains').fill('Log 7:'),
      `q=${encodeURIComponent('Log 7:')}&limit=50`,
      'Log 7: Alice walked 7 kilometres along the river',
    );
    await page
      .getByRole('button', { name: /^Delete memory: Log 7:/ })
      .first()
      .click();
    await page.getByText('Memory deleted.').waitFor();
    await settled();
    const after = await shown();
    assert.equal(after.length, before.length - 1);
    assert.deepEqual(after, await expected(`q=${encodeURIComponent('Log 7:')}&limit=50`));
    assert.equal(
      (await call('GET', `/v1/default/banks/${encodeURIComponent(BANK)}`)).body.memory_count,
      total - 1,
    );
  });

  test('entities and the graph of the memories that link them', async () => {
    await page.goto(`${server.url}/console${bankHash('entities')}`);
    const rows = page.locator('.table-wrap[aria-label="Entities"] tbody tr');
    await rows.first().getByText('Alice').waitFor();
    assert.ok((await rows.count()) >= 5);
    await page.goto(`${server.url}/console${bankHash('graph')}`);
    const pepper = page.getByRole('button', { name: /^Entity Pepper/ });
    await pepper.waitFor();
    assert.ok((await page.locator('svg.graph .node-memory').count()) > 0);
    assert.ok((await page.locator('svg.graph line.edge').count()) > 0);
    await pepper.focus();
    await page.keyboard.press('Enter');
    await page.locator('.graph-panel').getByText('Alice adopted a beagle named Pepper').waitFor();
    await shot('graph');
  });

  test('recall playground: results with every stage score and the token budget', async () => {
    await page.goto(`${server.url}/console${bankHash('recall')}`);
    await page.getByLabel('Query', { exact: true }).fill("What is the name of Alice's dog?");
    await page.getByRole('button', { name: 'Run recall' }).click();
    const results = page.locator('.result');
    await outcome('.result');
    const top = (await results.first().textContent()) ?? '';
    assert.match(top, /Pepper/);
    for (const stage of ['final', 'semantic', 'keyword', 'graph', 'temporal', 'reranker']) {
      assert.ok(await results.first().getByText(stage, { exact: true }).isVisible(), stage);
    }
    assert.ok(await page.getByText('Cut by the token budget').isVisible());
    await shot('recall');

    // A tight budget cuts results, and the page says so.
    await page.getByLabel('Max tokens').fill('12');
    await page.getByRole('button', { name: 'Run recall' }).click();
    await page.getByText('yes: later results did not fit').waitFor();

    // A bad option comes back as the server's message next to the field.
    await page.getByLabel('Max tokens').fill('0');
    await page.getByRole('button', { name: 'Run recall' }).click();
    const maxTokens = page.getByLabel('Max tokens');
    await page.locator(`#${await maxTokens.getAttribute('id')}-err`).waitFor();
    assert.equal(await maxTokens.getAttribute('aria-invalid'), 'true');
  });

  test('reflect playground shows the answer, its mode and what it was based on', async () => {
    await page.goto(`${server.url}/console${bankHash('reflect')}`);
    await page.getByLabel('Question').fill('What pet does Alice have?');
    await page.getByRole('button', { name: 'Reflect' }).click();
    await outcome('blockquote.answer');
    assert.ok(await page.getByText('mode: extractive').isVisible());
    // What it was based on: memories of this bank; the answer is not empty.
    const basedOn = await page.locator('.based-on').first().locator('li').allTextContents();
    assert.ok(basedOn.length > 0);
    assert.ok(
      basedOn.some((t) => /Alice|Pepper|Bob/.test(t)),
      basedOn.join(' | '),
    );
    assert.ok(((await page.locator('blockquote.answer').textContent()) ?? '').trim().length > 0);
    await shot('reflect');
  });

  test('config: a bad value shows the server message at the field; sliders save the disposition', async () => {
    await page.goto(`${server.url}/console${bankHash()}`);
    const empathy = page.getByLabel('disposition_empathy');
    await empathy.fill('9');
    await page.getByRole('button', { name: 'Save config' }).click();
    const err = page.locator(`#${await empathy.getAttribute('id')}-err`);
    await err.waitFor();
    assert.match((await err.textContent()) ?? '', /5/);
    assert.equal(await empathy.getAttribute('aria-invalid'), 'true');
    await page.getByRole('alert').filter({ hasText: 'invalid config' }).waitFor();
    await shot('config-error');
    const config = `/v1/default/banks/${encodeURIComponent(BANK)}/config`;
    assert.equal((await call('GET', config)).body.config.disposition_empathy, 3, 'nothing saved');

    await page.getByLabel('enable_reranking').uncheck();
    await page.getByLabel('disposition_empathy').fill('4');
    await page.getByRole('button', { name: 'Save config' }).click();
    await page.getByRole('button', { name: 'Reset enable_reranking to its default' }).waitFor();
    const saved = (await call('GET', config)).body;
    assert.equal(saved.config.disposition_empathy, 4);
    assert.equal(saved.overrides.enable_reranking, false);

    // Keyboard on a slider: two steps up from 3.
    const skepticism = page.getByRole('slider', { name: 'Skepticism' });
    await skepticism.focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await page.getByRole('button', { name: 'Save disposition' }).click();
    await page.getByText('Disposition saved.').waitFor();
    assert.equal((await call('GET', config)).body.config.disposition_skepticism, 5);

    await page.getByRole('button', { name: 'Reset enable_reranking to its default' }).click();
    await page
      .getByRole('button', { name: 'Reset enable_reranking to its default' })
      .waitFor({ state: 'detached' });
    assert.equal((await call('GET', config)).body.overrides.enable_reranking, undefined);
  });

  test('spaces: create, attach a bank, list its banks and org bank', async () => {
    await page.goto(`${server.url}/console#/spaces`);
    await page.getByLabel('Space id').fill('acme');
    await page.getByLabel('Name', { exact: true }).fill('Acme Inc');
    await page.getByRole('button', { name: 'Create space' }).click();
    const card = page.getByRole('region', { name: 'Space acme' });
    await card.waitFor();
    await card.getByLabel('Attach a bank').fill(BANK);
    await card.getByRole('button', { name: 'Attach' }).click();
    await card.getByRole('link', { name: BANK }).waitFor();
    assert.equal((await call('GET', `/v1/default/banks/${encodeURIComponent(BANK)}`)).body.space_id, 'acme');
    await card.getByRole('link', { name: '__org__:acme' }).waitFor();
    await shot('spaces');
  });

  test('directives: add, a bad value at its field, used by Reflect, switched off, deleted', async () => {
    const url = `/v1/default/banks/${encodeURIComponent(BANK)}/directives`;
    await page.goto(`${server.url}/console${bankHash()}`);
    const region = page.getByRole('region', { name: 'Directives' });
    await region.getByText('No directives.').waitFor();
    await region.getByLabel('Name (optional)').fill('brevity');
    await region.getByLabel('Rule').fill('Answer in one short sentence.');
    await region.getByLabel('Priority').fill('5000');
    await region.getByRole('button', { name: 'Add directive' }).click();
    const priority = region.getByLabel('Priority');
    await page.locator(`#${await priority.getAttribute('id')}-err`).waitFor();
    assert.equal(await priority.getAttribute('aria-invalid'), 'true');
    assert.deepEqual((await call('GET', url)).body.items, []);

    await priority.fill('5');
    await region.getByRole('button', { name: 'Add directive' }).click();
    await region.getByRole('cell', { name: /Answer in one short sentence/ }).waitFor();
    const [saved] = (await call('GET', url)).body.items;
    assert.equal(saved.name, 'brevity');
    assert.equal(saved.priority, 5);
    assert.equal(saved.active, true);

    await page.goto(`${server.url}/console${bankHash('reflect')}`);
    await page.getByLabel('Question').fill('Where does Alice work?');
    await page.getByRole('button', { name: 'Reflect' }).click();
    await outcome('blockquote.answer');
    await page
      .locator('.based-on')
      .filter({ hasText: 'Directives (1)' })
      .getByText('Answer in one short sentence.')
      .waitFor();

    await page.goto(`${server.url}/console${bankHash()}`);
    await region.getByRole('checkbox', { name: 'Directive brevity active' }).uncheck();
    await page.getByText('Directive deactivated.').waitFor();
    assert.equal((await call('GET', url)).body.items[0].active, false);
    await region.getByRole('button', { name: 'Delete directive brevity' }).click();
    await region.getByText('No directives.').waitFor();
    assert.deepEqual((await call('GET', url)).body.items, []);
  });

  test('operations: an async Retain is listed with its status until it completes', async () => {
    const op = await call('POST', `/v1/default/banks/${encodeURIComponent(BANK)}/memories`, {
      items: [{ content: 'Alice booked a trip to Rome for June' }],
      async: true,
    });
    assert.equal(op.status, 200, JSON.stringify(op.body));
    const id: string = op.body.operation_id;
    await page.goto(`${server.url}/console${bankHash('operations')}`);
    const row = page
      .locator('.table-wrap[aria-label="Operations"] tbody tr')
      .filter({ has: page.locator(`code[title="${id}"]`) });
    await row.waitFor();
    // The server's worker finishes it; Refresh shows the new status.
    for (let i = 0; i < 40 && (await row.getByText('completed', { exact: true }).count()) === 0; i++) {
      await new Promise((r) => setTimeout(r, 250));
      await page.getByRole('button', { name: 'Refresh' }).click();
      await settled();
    }
    assert.equal(await row.getByText('completed', { exact: true }).count(), 1);
    assert.equal(await row.locator('td[data-label="Memories created"]').textContent(), '1');
    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('No operations.').waitFor();
  });

  test('operations: Cancel on a running Retain (the API cancels it), none on a running consolidation (409)', async () => {
    const bank = 'held-operations';
    const path = `/v1/default/banks/${bank}`;
    assert.equal((await call('PUT', path, { enable_observations: false })).status, 200);
    const store = server.services.store;
    // Held running by a worker of the test's own, not the server's: queued without waking the
    // server's worker, and claimed at once (should the server's worker claim it first, it runs it
    // and another is queued; an operation of another bank claimed here is let go at once).
    const HOLDER = 'console-test';
    const running = async (kind: string, payload: unknown) => {
      for (let i = 0; i < 20; i++) {
        const op = await enqueueOperation({ store, onEnqueue: () => {} }, 'default', bank, kind, payload, {
          itemsCount: 1,
        });
        const claimed = await store.claimOperation(HOLDER, 600_000);
        if (claimed?.operation.id === op.id) return op.id;
        if (claimed) {
          const { projectId, operation: o, progress } = claimed;
          await store.yieldOperation(projectId, o.bank_id, o.id, HOLDER, progress, 0);
        }
      }
      assert.fail(`the server's worker took every ${kind} first`);
    };
    const retain = await running('retain', { items: [{ content: 'Alice plans a trip to Oslo' }] });
    const consolidation = await running(CONSOLIDATE, {});
    try {
      await page.goto(`${server.url}/console#/banks/${bank}/operations`);
      const row = (id: string) =>
        page
          .locator('.table-wrap[aria-label="Operations"] tbody tr')
          .filter({ has: page.locator(`code[title="${id}"]`) });
      await row(retain).waitFor();
      assert.equal(await row(retain).getByText('processing', { exact: true }).count(), 1);
      assert.equal(await row(consolidation).getByText('processing', { exact: true }).count(), 1);
      const cancelOf = (id: string) => page.getByRole('button', { name: `Cancel operation ${id}` });
      assert.equal(await cancelOf(consolidation).count(), 0, 'Cancel offered where the API answers 409');
      assert.equal((await call('DELETE', `${path}/operations/${consolidation}`)).status, 409);
      assert.equal(await cancelOf(retain).count(), 1, 'no Cancel on a running Retain');
      await cancelOf(retain).click();
      await page.getByText('Operation cancelled.').waitFor();
      await row(retain).getByText('cancelled', { exact: true }).waitFor();
      assert.equal((await call('GET', `${path}/operations/${retain}`)).body.status, 'cancelled');
      assert.equal(await cancelOf(retain).count(), 0, 'Cancel offered on a cancelled operation');
    } finally {
      await store.finishOperation('default', bank, consolidation, HOLDER, { status: 'completed' });
    }
  });

  test('evaluations: recall@k and MRR of the runs as a chart over time, a run’s cases, rerun, delete', async () => {
    const path = `/v1/default/banks/${encodeURIComponent(BANK)}`;
    const memories = (await call('GET', `${path}/memories?q=Pepper&limit=10`)).body.items;
    const pepper = memories.find((m: { text: string }) => m.text === 'Alice adopted a beagle named Pepper');
    assert.ok(pepper, JSON.stringify(memories.map((m: { text: string }) => m.text)));
    const cases = [
      { query: "What is the name of Alice's dog?", expected_memory_ids: [pepper.id] },
      { query: 'Where does Alice walk?', expected_memory_ids: [pepper.id] },
    ];
    const runs = [];
    // The dog is found first; a walk is no question about the dog: the second run scores lower.
    for (const some of [cases.slice(0, 1), cases]) {
      const r = await call('POST', `${path}/evaluations`, { k: some.length === 1 ? 1 : 5, cases: some });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      runs.push(r.body);
    }
    await page.goto(`${server.url}/console${bankHash('evaluations')}`);
    const chart = page.locator('svg.eval-chart');
    await chart.waitFor();
    assert.match((await chart.getAttribute('aria-label')) ?? '', /of 2 evaluation runs.*latest recall@5/);
    const points = page.locator('svg.eval-chart .series-recall circle');
    assert.equal(await points.count(), 2);
    assert.equal(await page.locator('svg.eval-chart .series-mrr polyline').count(), 1);
    // Each point sits at its run's figure: oldest on the left.
    const ys = await points.evaluateAll((cs) => cs.map((c) => Number(c.getAttribute('cy'))));
    const [older, newer] = runs;
    assert.notEqual(older.recall_at_k, newer.recall_at_k);
    assert.equal(Math.sign(ys[0]! - ys[1]!), Math.sign(newer.recall_at_k - older.recall_at_k));
    const rows = page.locator('.table-wrap[aria-label="Evaluation runs"] tbody tr');
    assert.equal(await rows.count(), 2);
    await shot('evaluations');

    await page.getByRole('button', { name: `Show run ${older.id}` }).click();
    const detail = page.locator('.run-detail');
    await detail.getByText("What is the name of Alice's dog?").waitFor();
    assert.equal(await detail.locator('.table-wrap[aria-label^="Cases of run"] tbody tr').count(), 1);

    await page.getByRole('button', { name: `Rerun run ${older.id}` }).click();
    await page.locator('svg.eval-chart .series-recall circle').nth(2).waitFor();
    assert.equal(await rows.count(), 3);
    const listed = await call('GET', `${path}/evaluations`);
    assert.equal(listed.body.items[0].k, 1, 'the rerun kept k');

    await page.getByRole('button', { name: `Delete run ${older.id}` }).click();
    await page.getByRole('button', { name: `Delete run ${older.id}` }).waitFor({ state: 'detached' });
    assert.equal(await points.count(), 2);
    assert.equal((await call('GET', `${path}/evaluations/${older.id}`)).status, 404);
  });

  test('the audit log with filters', async () => {
    await page.goto(`${server.url}/console#/audit`);
    const rows = page.locator('.table-wrap[aria-label="Audit entries"] tbody tr');
    await rows.first().waitFor();
    await page.getByLabel('Action').fill('keys.revoke');
    await page.getByRole('button', { name: 'Apply' }).click();
    await settled();
    await rows.first().getByText('keys.revoke').waitFor();
    const actions = await page
      .locator('.table-wrap[aria-label="Audit entries"] tbody td[data-label="Action"]')
      .allInnerTexts();
    assert.ok(actions.length >= 1);
    assert.ok(
      actions.every((a) => a === 'keys.revoke'),
      actions.join(','),
    );
    await page.getByLabel('Action').fill('');
    await page.getByLabel('Bank').fill(BANK);
    await page.getByRole('button', { name: 'Apply' }).click();
    await rows.getByText('banks.config.update').first().waitFor();
    const banks = await page
      .locator('.table-wrap[aria-label="Audit entries"] tbody td[data-label="Bank"]')
      .allInnerTexts();
    assert.ok(
      banks.every((b) => b === BANK),
      banks.join(','),
    );
    await shot('audit');
  });

  test('works 390 px wide: no sideways scrolling, tables stack', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${server.url}/console${bankHash('memories')}`);
    await page.locator('.table-wrap[aria-label="Memories"] tbody tr').first().waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `page is ${overflow}px wider than the screen`);
    await shot('mobile-memories');
    await page.goto(`${server.url}/console${bankHash('recall')}`);
    await page.getByLabel('Query', { exact: true }).fill('Where does Alice work?');
    await page.getByRole('button', { name: 'Run recall' }).click();
    await outcome('.result');
    assert.ok((await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)) <= 0);
    await page.locator('.results').evaluate((el) => el.scrollIntoView());
    await shot('mobile-recall');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  test('every form control on every page has a label', async () => {
    const pages = [
      '#/projects',
      '#/projects/acme-co',
      '#/spaces',
      '#/banks',
      '#/audit',
      ...['', 'memories', 'entities', 'graph', 'recall', 'reflect', 'evaluations', 'operations'].map(
        bankHash,
      ),
    ];
    for (const hash of pages) {
      await page.goto(`${server.url}/console${hash}`);
      await page.locator('main h1').waitFor();
      await page.waitForLoadState('networkidle');
      const unlabelled = await page.evaluate(() =>
        Array.from(document.querySelectorAll('input, select, textarea'))
          .filter((el) => {
            const c = el as HTMLInputElement;
            return !(c.labels?.length || c.getAttribute('aria-label') || c.getAttribute('aria-labelledby'));
          })
          .map((el) => el.outerHTML.slice(0, 120)),
      );
      assert.deepEqual(unlabelled, [], hash);
    }
  });

  test('no script errors and no CSP violations on any page', () => {
    assert.deepEqual(problems, []);
  });
});
