/**
 * The two test tiers. `npm test` runs every `*.test.ts`; `npm run test:fast` runs the fast
 * tier only, on the embedded engine: unit tests and in-process API tests.
 *
 * The rule, by path, so a new test lands in a tier by where it lives and what it is called:
 * a file is SLOW when it lives under one of SLOW_DIRS (stress, fuzzing, the browser) or its
 * name ends in `.slow.test.ts` (it starts processes, builds caches, fills large banks, or
 * otherwise takes more than a few seconds on the embedded engine). Everything else is fast.
 */
export const SLOW_DIRS = ['test/stress/', 'test/fuzz/', 'test/console/'];
export const SLOW_SUFFIX = '.slow.test.ts';

export function isSlow(path: string): boolean {
  const p = path.replaceAll('\\', '/');
  return p.endsWith(SLOW_SUFFIX) || SLOW_DIRS.some((d) => p.startsWith(d) || p.includes(`/${d}`));
}
