// Headless Chromium (Debian's, through playwright-core) for the page tests: one way to start it,
// with its own temporary profile, and one rule for when a page test is skipped (never under CI,
// where .ci/run installs chromium and a missing browser must fail the run).
import { existsSync, rmSync } from 'node:fs';
import { chromium, type BrowserContext } from 'playwright-core';
import { tempDir } from './relay-process.js';

export const CHROMIUM = '/usr/bin/chromium';

/** The `skip` option of a page test. */
export const chromiumSkip = (): false | string =>
  existsSync(CHROMIUM) || process.env.CI ? false : 'chromium is not installed (apt-get install chromium; .ci/run does it, and under CI the test runs and fails without it)';

export interface Browser {
  context: BrowserContext;
  /** closes the browser and removes its profile */
  close(): Promise<void>;
}

export async function openBrowser(viewport: { width: number; height: number }): Promise<Browser> {
  const profile = tempDir('orbweaver-chromium-');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, viewport,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    timeout: 60_000,
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
