import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CHROMIUM = '/usr/bin/chromium';

/**
 * Debian's `chromium`, installed with apt-get when it is missing and the tests run as root.
 * @returns `{ path }`, or `{ reason }` saying why there is none (printed by the test that skips)
 */
export function ensureChromium(): { path: string; reason?: never } | { path?: never; reason: string } {
  if (existsSync(CHROMIUM)) return { path: CHROMIUM };
  if (process.getuid?.() !== 0) return { reason: `${CHROMIUM} is missing and the tests do not run as root, so apt-get cannot install it (apt-get install chromium).` };
  try {
    execFileSync('apt-get', ['update'], { stdio: 'ignore', timeout: 300_000 });
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], { stdio: 'ignore', timeout: 600_000, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  } catch (error) {
    return { reason: `apt-get could not install chromium: ${error instanceof Error ? error.message : String(error)}` };
  }
  return existsSync(CHROMIUM) ? { path: CHROMIUM } : { reason: `apt-get installed chromium, yet ${CHROMIUM} is not there.` };
}
