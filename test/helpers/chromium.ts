import fs from 'node:fs';

/** Debian's Chromium, which the browser tests drive through playwright-core (.ci/run installs it). */
export const CHROMIUM = '/usr/bin/chromium';

/** The flags this machine needs: no sandbox as root, and no background traffic to a closed network. */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/**
 * Why a browser test is skipped, or undefined when it runs: only where Chromium is missing and
 * the run does not require it (WSP_TEST_REQUIRE_BROWSER=1, set by .ci/run, makes it fail instead).
 */
export function chromiumMissing(what: string): string | undefined {
  const reason = fs.existsSync(CHROMIUM) || process.env.WSP_TEST_REQUIRE_BROWSER === '1' ? undefined : `${CHROMIUM} is not installed (apt-get install chromium; .ci/run does)`;
  if (reason) console.log(`# ${what}: skipped: ${reason}`);
  return reason;
}
