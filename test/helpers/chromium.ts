/** Debian's Chromium for the browser tests (never a downloaded browser), via playwright-core. */
import { type BrowserContext, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

type LaunchOptions = NonNullable<Parameters<typeof chromium.launchPersistentContext>[1]>;

/** A headless Chromium with its profile in `profile` (a fresh temporary directory). */
export function launchChromium(profile: string, options: LaunchOptions = {}): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profile, {
    ...options,
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      ...(options.args ?? []),
    ],
  });
}
