/**
 * The headless browser of the browser tests: Debian's chromium (`apt-get install chromium`; .ci/run installs
 * it), driven by playwright-core. A test file skips its browser tests, saying why, where it is missing.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/** Where the browser tests look for chromium. */
export const CHROMIUM = "/usr/bin/chromium";

/** Whether chromium is installed: `describe.skipIf(!HAS_CHROMIUM)(...)`, titled with {@link NO_CHROMIUM}. */
export const HAS_CHROMIUM = existsSync(CHROMIUM);

/** Why browser tests are skipped when they are, for their describe's title. */
export const NO_CHROMIUM = `skipped when ${CHROMIUM} is missing: apt-get install chromium`;

/** Launches headless chromium; the caller closes it. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM });
}
