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

/** How long a session's lock is kept after a write for the next write of this process to reuse (ms). */
export const LOCK_IDLE_HOLD_MS = 50;
/**
 * A lock is reused only this long after it was taken (ms): its folder's mtime is at least as new as
 * the taking, so no other process can find it stale (at least 2000 ms) while it is reused, and a
 * session written back to back is let go at least this often.
 */
export const LOCK_MAX_HOLD_MS = 250;

/** A session lock this process took and may keep between writes (see {@link SessionLocks}). */
interface HeldLock {
  readonly target: string;
  readonly owner: SessionLocks;
  /** Removes the lock folder (proper-lockfile's release). */
  readonly release: () => Promise<void>;
  /** When the folder was made (`Date.now()`). */
  readonly takenAt: number;
  /** When the last write under it ended (`Date.now()`). */
  lastEnd: number;
  /** `lost` is set when proper-lockfile found the lock taken over (the process stalled for longer than `staleMs`). */
  readonly state: { lost?: Error };
  /** A write of the owner holds it now. */
  inUse: boolean;
  /** Another `SessionLocks` of this process waits for it: let go after the write in use. */
  wanted: boolean;
  /** Lets go of it once idle for {@link LOCK_IDLE_HOLD_MS}. */
  timer?: ReturnType<typeof setTimeout>;
}

/**
 * A writer waiting for a lock held by another marks it with an empty file `<target>.wait`, again at each
 * retry (proper-lockfile calls `mkdir` on every attempt), so that a holder of another process lets go of
 * the lock after its write instead of keeping it for its next one: a session written back to back by one
 * process is taken by a waiting one as readily as when every write let go.
 */
function waitingFs(target: string): typeof LOCK_FS {
  const mark = `${target}.wait`;
  const mkdir = ((path: string, mode: unknown, callback?: (error: NodeJS.ErrnoException | null) => void) => {
    const done = (typeof mode === 'function' ? mode : callback) as (error: NodeJS.ErrnoException | null) => void;
    fs.mkdir(path, typeof mode === 'function' ? undefined : (mode as fs.MakeDirectoryOptions), (error) => {
      if (error?.code === 'EEXIST') fs.writeFile(mark, '', () => done(error));
      else done(error);
    });
  }) as typeof fs.mkdir;
  return { ...LOCK_FS, mkdir };
}

/** Whether a writer waits for the lock at `target` (see {@link waitingFs}); the mark is taken (waiters still waiting mark it again). */
function tookWaitMark(target: string): boolean {
  try {
    fs.unlinkSync(`${target}.wait`);
    return true;
  } catch {
    return false;
  }
}

/**
 * The locks kept between writes in this process, by target, whichever `SessionLocks` holds them: a
 * second `FileStore` of the process on the same folder has a kept lock let go at once instead of
 * waiting out {@link LOCK_IDLE_HOLD_MS}.
 */
const KEPT = new Map<string, HeldLock>();

/** {@link LOCK_FS} without removing the folder: proper-lockfile forgets a lock without deleting it. */
const KEEP_FOLDER_FS = { ...LOCK_FS, rmdir: (_path: string, callback: () => void) => callback() };

/**
 * One writer per session at a time, across processes: a `proper-lockfile` lock (an atomic `mkdir`
 * of `<root>/locks/<sessionId>.lock`, refreshed while held, broken when stale after a crash), with
 * an in-process `async-mutex` `Mutex` per session in front, so that writers of one process take
 * turns (first come, first served) without polling. A lock is kept for {@link LOCK_IDLE_HOLD_MS}
 * after a write and reused by the next write of the session in that window (a turn's writes, a
 * session written back to back), so those pay no `mkdir` and `rmdir` of the lock folder; it is let
 * go when idle, {@link LOCK_MAX_HOLD_MS} after it was taken, when another store of the process wants
 * it, and on `close()`. Another process thus waits at most that much longer (plus its retry delay),
 * and a process killed while keeping it leaves a lock that goes stale as before.
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

  /** Resolves once every queued writer of this process has finished and the locks kept are let go. */
  async idle(): Promise<void> {
    await Promise.all([...this.#mutexes.values()].map((mutex) => mutex.waitForUnlock()));
    const kept = [...KEPT.values()].filter((lock) => lock.owner === this && !lock.inUse);
    await Promise.all(kept.map((lock) => this.#letGo(lock)));
  }

  async #withFileLock<T>(
    sessionId: string,
    target: string,
    work: () => Promise<T>,
    releasing: (release: Promise<void>) => void,
  ): Promise<T> {
    let lock = await this.#kept(target);
    // Alone, a free lock is taken synchronously; beside other writes of this process (whose flushes can hold
    // the file system's journal, so that an mkdir waits for them) asynchronously, so the other work goes on.
    const alone = this.#writing === 0;
    this.#writing += 1;
    try {
      lock ??= await this.#acquire(sessionId, target, alone);
    } catch (error) {
      this.#writing -= 1;
      throw error;
    }
    lock.inUse = true;
    let result: T;
    try {
      result = await work();
    } finally {
      this.#writing -= 1;
      lock.inUse = false;
      lock.lastEnd = Date.now();
      releasing(this.#afterWrite(lock));
    }
    if (lock.state.lost !== undefined) {
      throw new ConcurrencyError(
        `The lock of session ${JSON.stringify(sessionId)} was lost while writing (the process stalled for more than ${this.#options.staleMs} ms, so another writer may have broken it). Reload the session and check the write.`,
        { cause: lock.state.lost },
      );
    }
    return result;
  }

  /**
   * This store's kept lock at `target` when it may be reused (taken less than {@link LOCK_MAX_HOLD_MS}
   * ago, not lost); else it is let go first. A lock another store of this process keeps is let go (or,
   * in use, asked to be), so that this store can take it.
   */
  async #kept(target: string): Promise<HeldLock | undefined> {
    const lock = KEPT.get(target);
    if (lock === undefined) return undefined;
    if (lock.owner === this && lock.state.lost === undefined && Date.now() - lock.takenAt < LOCK_MAX_HOLD_MS) {
      clearTimeout(lock.timer);
      return lock;
    }
    if (lock.inUse) lock.wanted = true;
    else await this.#letGo(lock);
    return undefined;
  }

  /** After a write: keeps the lock for the next write of the session, or lets it go (see {@link SessionLocks}). */
  #afterWrite(lock: HeldLock): Promise<void> {
    if (KEPT.get(lock.target) !== lock) return Promise.resolve(); // let go meanwhile (by idle())
    if (
      lock.state.lost !== undefined ||
      lock.wanted ||
      Date.now() - lock.takenAt >= LOCK_MAX_HOLD_MS ||
      tookWaitMark(lock.target)
    )
      return this.#letGo(lock);
    lock.timer = setTimeout(() => {
      if (!lock.inUse) void this.#letGo(lock);
    }, LOCK_IDLE_HOLD_MS);
    lock.timer.unref();
    return Promise.resolve();
  }

  /**
   * Removes the lock folder, unless the lock was lost, or was kept idle for half its staleness (the
   * process stalled: another process may have broken and taken it, so its folder is left to go stale).
   */
  #letGo(lock: HeldLock): Promise<void> {
    if (KEPT.get(lock.target) !== lock) return Promise.resolve();
    KEPT.delete(lock.target);
    clearTimeout(lock.timer);
    if (lock.state.lost !== undefined) return Promise.resolve();
    if (Date.now() - lock.lastEnd >= this.#options.staleMs / 2) {
      // proper-lockfile forgets it (stops refreshing it) without removing the folder.
      return lockfile
        .unlock(lock.target, { realpath: false, lockfilePath: `${lock.target}.lock`, fs: KEEP_FOLDER_FS })
        .catch(() => {});
    }
    return lock.release().catch(() => {});
  }

  /** Takes the lock at `target` (see {@link #take}), kept in {@link KEPT} until let go. */
  async #acquire(sessionId: string, target: string, alone: boolean): Promise<HeldLock> {
    // Found lost by proper-lockfile (its refresh, later): the write in use throws, and the lock is not reused.
    const state: { lost?: Error } = {};
    const release = await this.#take(sessionId, target, alone, (error) => {
      state.lost = error;
    });
    const now = Date.now();
    const lock: HeldLock = {
      target,
      owner: this,
      release,
      state,
      takenAt: now,
      lastEnd: now,
      inUse: false,
      wanted: false,
    };
    KEPT.set(target, lock);
    return lock;
  }

  async #take(
    sessionId: string,
    target: string,
    alone: boolean,
    onCompromised: (error: Error) => void,
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
      fs: waitingFs(target),
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
