/**
 * The SDK as its users get it: built to JavaScript and `.d.ts` (tsc), packed with `npm pack`,
 * installed into a fresh project outside the repository, then used from plain Node 20 (ESM,
 * against a live server) and compiled by strict TypeScript (a misspelt response field must not
 * compile). Offline: the tarball's one dependency (zod) and the types a TypeScript project has
 * (@types/node) are linked from this repository's node_modules, and npm runs with `--offline`.
 */
import assert from 'node:assert/strict';
import { execFile, type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ENGINES } from '../../../test/helpers/engines.js';
import { ADMIN_TOKEN, startLiveServer } from './live-server.js';

const PACKAGE = fileURLToPath(new URL('..', import.meta.url));
const REPO = join(PACKAGE, '../..');
const TSC = join(REPO, 'node_modules/typescript/bin/tsc');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** A package directory of the repository's node_modules, symlinks resolved. */
const repoModule = (name: string) => realpathSync(join(REPO, 'node_modules', name));

function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): SpawnSyncReturns<string> {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, npm_config_update_notifier: 'false', ...env },
  });
  if (r.error) throw r.error;
  return r;
}

function ok(r: SpawnSyncReturns<string>, what: string): string {
  assert.equal(r.status, 0, `${what} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

const PLAIN_NODE = `
import { Mnemo, NotFoundError } from '@mnemo/client';
const mnemo = new Mnemo({ baseUrl: process.env.MNEMO_URL, adminToken: process.env.MNEMO_TOKEN });
const stored = await mnemo.memories.retain('packed', {
  items: [{ content: 'Alice adopted a beagle named Pepper.' }, { content: 'Bob moved to Lisbon in May.' }],
});
const recalled = await mnemo.memories.recall('packed', 'What dog did Alice adopt?');
const listed = await mnemo.memories.list('packed').toArray();
let notFound = false;
try {
  await mnemo.banks.get('no-such-bank');
} catch (err) {
  notFound = err instanceof NotFoundError && err.status === 404 && typeof err.requestId === 'string';
}
const version = await mnemo.version();
console.log(JSON.stringify({
  created: stored.memories_created,
  top: recalled.results[0]?.text,
  listed: listed.length,
  notFound,
  api: version.api_version,
}));
`;

/** Compiles in a strict project: the `@ts-expect-error` lines must be errors, the rest must not. */
const STRICT_TS = `
import { Mnemo, type Memory, type RecallResponse, NotFoundError } from '@mnemo/client';

const mnemo = new Mnemo({ apiKey: 'mk_example' });

export async function use(): Promise<string> {
  const recalled: RecallResponse = await mnemo.memories.recall('bank', 'what does Alice like?');
  const first = recalled.results[0];
  const tokens: number = recalled.usage.tokens_used;
  // @ts-expect-error a misspelt response field does not compile
  recalled.result;
  // @ts-expect-error nor does one on an item of a response
  first?.txt;
  // @ts-expect-error nor a misspelt request field
  await mnemo.memories.recall('bank', { query: 'q', max_token: 100 });
  // @ts-expect-error nor a value outside an enum of the contract
  await mnemo.memories.retain('bank', { items: [{ content: 'x', fact_type: 'gossip' }] });
  const page = await mnemo.memories.list('bank', { limit: 10 });
  const memory: Memory | undefined = page.items[0];
  const answer = await mnemo.reflect('bank', 'what does Alice like?');
  try {
    await mnemo.banks.get('bank');
  } catch (err) {
    if (err instanceof NotFoundError) return err.code;
  }
  return \`\${first?.text ?? memory?.text ?? ''} \${answer.response} \${tokens}\`;
}
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    skipLibCheck: false,
    noEmit: true,
    types: ['node'],
  },
  files: ['use.ts'],
};

describe('the packed SDK, installed outside the repository', { timeout: 300_000 }, () => {
  let project: string;
  before(() => {
    ok(run(process.execPath, [TSC, '-p', 'tsconfig.build.json'], PACKAGE), 'tsc build');
    project = mkdtempSync(join(realpathSync(tmpdir()), 'mnemo-sdk-'));
    const packDir = join(project, 'pack');
    mkdirSync(packDir);
    const packed = JSON.parse(
      ok(
        run(NPM, ['pack', '--ignore-scripts', '--json', '--pack-destination', packDir], PACKAGE),
        'npm pack',
      ),
    ) as { filename: string; files: { path: string }[] }[];
    const tarball = join(packDir, packed[0]!.filename);
    const files = packed[0]!.files.map((f) => f.path);
    assert.ok(files.includes('dist/packages/client/src/index.js'), files.join('\n'));
    assert.ok(files.includes('dist/packages/client/src/index.d.ts'));
    assert.ok(!files.some((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')), 'no TypeScript sources');

    const app = join(project, 'app');
    mkdirSync(app);
    // What the tarball and a TypeScript project need, from the repository instead of the registry.
    const linked = {
      zod: `file:${repoModule('zod')}`,
      '@types/node': `file:${repoModule('@types/node')}`,
      'undici-types': `file:${repoModule('undici-types')}`,
    };
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'sdk-user', private: true, type: 'module', dependencies: linked }),
    );
    ok(
      run(NPM, ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball], app),
      'npm install of the tarball',
    );
    writeFileSync(join(app, 'main.mjs'), PLAIN_NODE);
    writeFileSync(join(app, 'use.ts'), STRICT_TS);
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    const installed = JSON.parse(readFileSync(join(app, 'node_modules/@mnemo/client/package.json'), 'utf8'));
    assert.deepEqual(Object.keys(installed.dependencies), ['zod'], 'zod is its only dependency');
  });
  after(() => rmSync(project, { recursive: true, force: true }));

  test('strict TypeScript compiles against its .d.ts; misspelt fields are errors', () => {
    const app = join(project, 'app');
    ok(run(process.execPath, [TSC, '-p', 'tsconfig.json'], app), 'tsc in the user project');
    // And the expected errors are real: without the directives the same file fails on each line.
    writeFileSync(join(app, 'use.ts'), STRICT_TS.replaceAll('// @ts-expect-error', '//'));
    const r = run(process.execPath, [TSC, '-p', 'tsconfig.json'], app);
    writeFileSync(join(app, 'use.ts'), STRICT_TS);
    assert.notEqual(r.status, 0);
    const errors = r.stdout.split('\n').filter((l) => l.includes('error TS'));
    assert.equal(errors.length, 4, r.stdout);
  });

  for (const engine of ENGINES) {
    test(`plain Node 20 imports it and talks to a live server (${engine})`, async () => {
      const server = await startLiveServer(engine);
      try {
        const out = await new Promise<string>((resolve, reject) => {
          // Async spawn: the server answers from this process's event loop.
          execFile(
            process.execPath,
            ['main.mjs'],
            {
              cwd: join(project, 'app'),
              timeout: 120_000,
              env: { ...process.env, MNEMO_URL: server.url, MNEMO_TOKEN: ADMIN_TOKEN },
            },
            (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
          );
        });
        const result = JSON.parse(out.trim().split('\n').at(-1)!);
        assert.deepEqual(result, {
          created: 2,
          top: 'Alice adopted a beagle named Pepper.',
          listed: 2,
          notFound: true,
          api: 'v1',
        });
      } finally {
        await server.close();
      }
    });
  }
});
