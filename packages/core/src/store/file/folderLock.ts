/**
 * The session lock where the kernel lock cannot be loaded (a platform without a build of
 * `fs-native-extensions`): a `proper-lockfile` lock folder, as Baton's processes took before the
 * kernel lock. Both kinds use the same path, so a process of either kind waits for the other.
 */
import * as fs from 'node:fs';
import { mkdir } from 'node:fs/promises';
import lockfile, { type LockOptions } from 'proper-lockfile';
import { hasErrorCode } from './fileIo.js';
import type { FileLayout } from './fileLayout.js';
import { lockFailed, lockHeldTooLong } from './lockErrors.js';
import type { SessionLockOptions } from './sessionLock.js';

/**
 * The file system calls `proper-lockfile` makes, as its `fs` option. Its synchronous API copies the
 * `fs` object it is given on every call, and its default (`graceful-fs`, hundreds of members) made
 * that copy about 60–80 µs of CPU per lock taken; this object has only the members it calls.
 */
const LOCK_FS = {
  mkdir: fs.mkdir,
  mkdirSync: fs.mkdirSync,
  rmdir: fs.rmdir,
  rmdirSync: fs.rmdirSync,
  stat: fs.stat,
  statSync: fs.statSync,
  utimes: fs.utimes,
  utimesSync: fs.utimesSync,
  realpath: fs.realpath,
  realpathSync: fs.realpathSync,
};

/**
 * Takes the lock folder `<target>.lock` (synchronously when `alone`, this process's only write);
 * resolves with its release. A held lock is waited for, with retries, up to `options.waitMs`.
 * @throws {ConcurrencyError} when another writer holds it for longer than `waitMs`
 * @throws {StoreError} when the lock folder cannot be made
 */
export async function takeFolderLock(
  layout: FileLayout,
  options: SessionLockOptions,
  sessionId: string,
  target: string,
  onCompromised: (error: Error) => void,
  alone: boolean,
): Promise<() => Promise<void>> {
  const { staleMs, waitMs } = options;
  const once: LockOptions = {
    realpath: false,
    lockfilePath: `${target}.lock`,
    stale: staleMs,
    onCompromised,
    fs: LOCK_FS,
  };
  // The usual case, a free lock, with synchronous calls when this is the process's only write (an mkdir, and
  // the utimes and stat of the mtime probe `lockSync` repeats on every call: a few µs, no thread-pool round
  // trips), else one asynchronous try; a held lock is waited for asynchronously, with retries.
  try {
    if (alone) lockfile.lockSync(target, once);
    else return await lockfile.lock(target, once);
    return () => lockfile.unlock(target, { realpath: false, lockfilePath: once.lockfilePath!, fs: LOCK_FS });
  } catch (error) {
    if (!hasErrorCode(error, 'ELOCKED') && !hasErrorCode(error, 'ENOENT')) {
      throw lockFailed(sessionId, layout.locksDir, error);
    }
  }
  const waiting: LockOptions = {
    ...once,
    retries: { retries: Math.ceil(waitMs / 40) + 5, minTimeout: 5, maxTimeout: 40, factor: 1.5 },
  };
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await lockfile.lock(target, waiting);
    } catch (error) {
      if (hasErrorCode(error, 'ENOENT') && attempt === 0) {
        await mkdir(layout.locksDir, { recursive: true });
        continue;
      }
      if (hasErrorCode(error, 'ELOCKED')) {
        throw lockHeldTooLong(sessionId, waitMs, error);
      }
      throw lockFailed(sessionId, layout.locksDir, error);
    }
  }
}
