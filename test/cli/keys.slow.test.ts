/** `mnemo keys create --banks`: a key limited to some banks, minted straight on the database. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openConfiguredStore } from '../../src/cli/store.js';
import { createTestDatabase, ENGINES, seedDataDir, type TestDatabase } from '../helpers/engines.js';
import { runCli } from './cli.js';

for (const engine of ENGINES) {
  describe(`mnemo keys create --banks (${engine})`, () => {
    let root: string;
    let pg: TestDatabase | undefined;
    let vars: Record<string, string>;
    let input: { dataDir?: string; databaseUrl?: string };

    before(async () => {
      root = mkdtempSync(join(tmpdir(), 'mnemo-keys-cli-'));
      if (engine === 'postgres') {
        pg = await createTestDatabase();
        const url = pg.url ?? '';
        input = { databaseUrl: url };
        vars = { MNEMO_DATABASE_URL: url };
      } else {
        const dataDir = join(root, 'data');
        await seedDataDir(dataDir, 'migrated'); // migrating is test/store/schema-version.slow.test.ts's
        input = { dataDir };
        vars = { MNEMO_DATA_DIR: dataDir };
      }
    });
    after(async () => {
      await pg?.drop();
      rmSync(root, { recursive: true, force: true });
    });

    test('mints a key limited to the listed banks; a bad list is refused and mints nothing', async () => {
      const made = await runCli(
        ['keys', 'create', '--scopes', 'recall', '--name', 'user42', '--banks', 'alice, user-42/*'],
        vars,
      );
      assert.equal(made.code, 0, made.stderr);
      for (const banks of ['', 'a*b', '*']) {
        const bad = await runCli(
          ['keys', 'create', '--scopes', 'recall', '--name', 'bad', '--banks', banks],
          vars,
        );
        assert.notEqual(bad.code, 0, `--banks '${banks}'`);
      }
      const plain = await runCli(['keys', 'create', '--scopes', 'recall', '--name', 'plain'], vars);
      assert.equal(plain.code, 0, plain.stderr);
      const store = await openConfiguredStore(input);
      try {
        const keys = await store.listApiKeys('default');
        assert.deepEqual(
          keys.map((k) => [k.name, k.banks]),
          [
            ['user42', ['alice', 'user-42/*']],
            ['plain', null],
          ],
        );
      } finally {
        await store.close();
      }
    });
  });
}
