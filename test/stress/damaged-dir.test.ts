/**
 * A damaged embedded data directory is never opened as an empty database: mnemo refuses with an
 * error naming the directory and the way to recover, and leaves the files as they were.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openStore } from '../../src/store/open.js';

/** Every file under a directory with its size: what a failed open must not change. */
function listing(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else out.push(`${p.slice(dir.length)} ${st.size}`);
    }
  };
  walk(dir);
  return out.sort();
}

describe('damaged embedded data directory', () => {
  const root = mkdtempSync(join(tmpdir(), 'mnemo-damaged-'));
  const good = join(root, 'good');
  before(async () => {
    const store = await openStore({ dataDir: good });
    await store.ensureBank('default', 'kept', {});
    await store.close();
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  const cases: [string, (pgdata: string) => void][] = [
    ['PG_VERSION missing', (d) => rmSync(join(d, 'PG_VERSION'))],
    ['every database file missing', (d) => rmSync(d, { recursive: true })],
    ['pg_control overwritten', (d) => writeFileSync(join(d, 'global/pg_control'), Buffer.alloc(8192, 7))],
    ['pg_control truncated', (d) => truncateSync(join(d, 'global/pg_control'), 10)],
    ['write-ahead log missing', (d) => rmSync(join(d, 'pg_wal'), { recursive: true })],
  ];
  for (const [name, damage] of cases) {
    test(`${name}: a clear error naming the directory and the recovery, files untouched`, async () => {
      const dir = join(root, name.replace(/\W+/g, '-'));
      cpSync(good, dir, { recursive: true });
      damage(join(dir, 'pgdata'));
      const files = listing(dir);
      await assert.rejects(openStore({ dataDir: dir }), (err: Error) => {
        assert.match(err.message, new RegExp(`cannot open the embedded database in ${dir}`));
        assert.match(err.message, /move it aside and restore from an export \(mnemo import\)/);
        return true;
      });
      // Lock and pid files come and go; the data files stay as they were.
      const data = (xs: string[]) => xs.filter((f) => !/mnemo\.lock|postmaster\.pid/.test(f));
      assert.deepEqual(data(listing(dir)), data(files));
    });
  }

  test('the undamaged copy still opens with its data', async () => {
    const store = await openStore({ dataDir: good });
    try {
      assert.ok(await store.getBank('default', 'kept'));
    } finally {
      await store.close();
    }
  });
});
