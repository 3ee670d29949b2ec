/**
 * The per-test watchdog (timeouts.ts, preloaded by test/run.ts): a test that never ends fails
 * its file, naming the test, instead of hanging the suite (issue 19).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';

test('a test that never ends stops its file with a failure that names it', async () => {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', './test/runner/timeouts.ts', 'test/runner/fixtures/hangs.ts'],
    {
      env: { ...process.env, MNEMO_TEST_TIMEOUT: '2000', MNEMO_SOAK: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  // Without a watchdog the fixture would never end: stopped here, it fails the test instead.
  const backstop = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearTimeout(backstop);
  assert.equal(code, 1, out);
  assert.match(out, /✖ TIMEOUT: test "waits forever" ran over 2 s/);
});
