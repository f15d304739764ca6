import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CHROMIUM = '/usr/bin/chromium';

/**
 * Debian's `chromium`, installed with apt-get when it is missing and the tests run as root.
 * @returns `{ path }`, or `{ reason }` saying why there is none (printed by the test that skips)
 */
export function ensureChromium(): { path: string; reason?: never } | { path?: never; reason: string } {
  if (existsSync(CHROMIUM)) return { path: CHROMIUM };
  if (process.getuid?.() !== 0)
    return {
      reason: `${CHROMIUM} is missing and the tests do not run as root, so apt-get cannot install it (apt-get install chromium).`,
    };
  // Another apt-get may hold the dpkg lock (a machine installing packages as it starts): wait for it (up to 5 min) instead of failing at once.
  const waitForLock = ['-o', 'DPkg::Lock::Timeout=300'];
  try {
    execFileSync('apt-get', [...waitForLock, 'update'], { stdio: 'ignore', timeout: 300_000 });
    execFileSync('apt-get', [...waitForLock, 'install', '-y', '--no-install-recommends', 'chromium'], {
      stdio: 'ignore',
      timeout: 900_000,
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  } catch (error) {
    return { reason: `apt-get could not install chromium: ${error instanceof Error ? error.message : String(error)}` };
  }
  return existsSync(CHROMIUM)
    ? { path: CHROMIUM }
    : { reason: `apt-get installed chromium, yet ${CHROMIUM} is not there.` };
}
