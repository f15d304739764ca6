import * as fs from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { Mutex } from 'async-mutex';
import lockfile, { type LockOptions } from 'proper-lockfile';
import { ConcurrencyError, StoreError } from '../../errors.js';
import { hasErrorCode } from './fileIo.js';
import type { FileLayout } from './fileLayout.js';

/** Timing of {@link SessionLocks}. */
export interface SessionLockOptions {
  /** A lock not refreshed for this long belongs to a crashed process and is broken (ms, at least 2000). */
  staleMs: number;
  /** How long a write waits for another writer's lock before giving up with `ConcurrencyError` (ms). */
  waitMs: number;
}

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
 * One writer per session at a time, across processes: a `proper-lockfile` lock (an atomic `mkdir`
 * of `<root>/locks/<sessionId>.lock`, refreshed while held, broken when stale after a crash), with
 * an in-process `async-mutex` `Mutex` per session in front, so that writers of one process take
 * turns (first come, first served) without polling.
 */
export class SessionLocks {
  readonly #layout: FileLayout;
  readonly #options: SessionLockOptions;
  /** One mutex per lock (by its target path) with a writer of this process holding or waiting (dropped when none does). */
  readonly #mutexes = new Map<string, Mutex>();
  /** Writes of this process holding (or taking) a session's file lock right now. */
  #writing = 0;

  constructor(layout: FileLayout, options: SessionLockOptions) {
    this.#layout = layout;
    this.#options = options;
  }

  /**
   * Runs `work` while holding session `sessionId`'s lock, or the lock at `target` (another lock of the
   * session, e.g. `FileLayout.leaseLockTarget`'s).
   * @throws {ConcurrencyError} when another writer holds the lock for longer than `waitMs`, or the
   *   lock was lost while `work` ran (the process stalled for longer than `staleMs`)
   */
  async run<T>(sessionId: string, work: () => Promise<T>, target = this.#layout.lockTarget(sessionId)): Promise<T> {
    let mutex = this.#mutexes.get(target);
    if (mutex === undefined) {
      mutex = new Mutex();
      this.#mutexes.set(target, mutex);
    }
    const releaseMutex = await mutex.acquire();
    let released: Promise<void> = Promise.resolve();
    try {
      return await this.#withFileLock(sessionId, target, work, (release) => {
        released = release;
      });
    } finally {
      // The caller has its result once the work is durable; the next writer (of this process)
      // waits for the lock folder's removal, the caller does not.
      void released.then(() => {
        releaseMutex();
        // The next waiter takes the mutex synchronously on release: an unlocked one has none.
        if (!mutex.isLocked() && this.#mutexes.get(target) === mutex) this.#mutexes.delete(target);
      });
    }
  }

  /** Resolves once every queued writer of this process has finished. */
  async idle(): Promise<void> {
    await Promise.all([...this.#mutexes.values()].map((mutex) => mutex.waitForUnlock()));
  }

  async #withFileLock<T>(
    sessionId: string,
    target: string,
    work: () => Promise<T>,
    releasing: (release: Promise<void>) => void,
  ): Promise<T> {
    let lost: Error | undefined;
    // Alone, a free lock is taken synchronously; beside other writes of this process (whose flushes can hold
    // the file system's journal, so that an mkdir waits for them) asynchronously, so the other work goes on.
    const alone = this.#writing === 0;
    this.#writing += 1;
    let release: () => Promise<void>;
    try {
      release = await this.#acquire(
        sessionId,
        target,
        (error) => {
          lost = error;
        },
        alone,
      );
    } catch (error) {
      this.#writing -= 1;
      throw error;
    }
    let result: T;
    try {
      result = await work();
    } finally {
      this.#writing -= 1;
      releasing(release().catch(() => {}));
    }
    if (lost !== undefined) {
      throw new ConcurrencyError(
        `The lock of session ${JSON.stringify(sessionId)} was lost while writing (the process stalled for more than ${this.#options.staleMs} ms, so another writer may have broken it). Reload the session and check the write.`,
        { cause: lost },
      );
    }
    return result;
  }

  async #acquire(
    sessionId: string,
    target: string,
    onCompromised: (error: Error) => void,
    alone: boolean,
  ): Promise<() => Promise<void>> {
    const { staleMs, waitMs } = this.#options;
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
        throw new StoreError(
          `Could not lock session ${JSON.stringify(sessionId)} under ${this.#layout.locksDir}: ${(error as Error).message}`,
          { cause: error },
        );
      }
    }
    const options: LockOptions = {
      ...once,
      retries: { retries: Math.ceil(waitMs / 40) + 5, minTimeout: 5, maxTimeout: 40, factor: 1.5 },
    };
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await lockfile.lock(target, options);
      } catch (error) {
        if (hasErrorCode(error, 'ENOENT') && attempt === 0) {
          await mkdir(this.#layout.locksDir, { recursive: true });
          continue;
        }
        if (hasErrorCode(error, 'ELOCKED')) {
          throw new ConcurrencyError(
            `Session ${JSON.stringify(sessionId)} is being written by another writer (its lock was held for more than ${waitMs} ms). Retry later.`,
            { cause: error },
          );
        }
        throw new StoreError(
          `Could not lock session ${JSON.stringify(sessionId)} under ${this.#layout.locksDir}: ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      }
    }
  }
}
