/**
 * Preloaded into every test process by `test/run.ts`: when the process's tests are done, closes
 * the embedded databases kept for reuse (test/helpers/pglite-pool.ts), whose timers would
 * otherwise keep the process alive. A root-level `after` hook runs once every test has ended.
 */
import { after } from 'node:test';
import { closeIdle } from '../helpers/pglite-pool.js';

after(closeIdle);
