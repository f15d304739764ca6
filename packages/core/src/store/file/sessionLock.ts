import { closeSync, constants, fstatSync, mkdirSync, openSync, rmdirSync, statSync, unlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { ConcurrencyError, ConfigurationError, NotFoundError, StoreError } from '../../errors.js';
import { KeyedLock } from '../keyedLock.js';
import { hasErrorCode } from './fileIo.js';
import type { FileLayout } from './fileLayout.js';
import { takeFolderLock } from './folderLock.js';
import { lockFailed, lockHeldTooLong } from './lockErrors.js';
import { KEEP_LOCK_FILES, KeptLockFiles, type LockFile } from './lockFiles.js';

/** Timing of {@link SessionLocks}, and which lock it takes. */
export interface SessionLockOptions {
  /**
   * A lock folder (of a folder lock, or of a Baton process from before the kernel lock) not
   * refreshed for this long belongs to a crashed process and is broken (ms, at least 2000).
   */
  staleMs: number;
  /** How long a write waits for another writer's lock before giving up with `ConcurrencyError` (ms). */
  waitMs: number;
  /** `'kernel'` (the default where `fs-native-extensions` loads) or `'folder'` (see {@link SessionLocks}). */
  kind?: 'kernel' | 'folder' | undefined;
}

/** The two calls of `fs-native-extensions` the kernel lock makes. */
interface KernelLockCalls {
  /** Takes an exclusive lock of `length` bytes from `offset`, or answers false at once when another holds them. */
  tryLock(fd: number, offset: number, length: number): boolean;
  unlock(fd: number, offset: number, length: number): void;
}

/** The byte whose lock is the session's lock, and the byte a waiter holds while it waits (see `#takeKernelLock`). */
const LOCK_BYTE = 0;
const ENTRY_BYTE = 1;
/** Whether the kernel locks byte ranges apart (`fcntl`, `LockFileEx`); macOS's `flock` locks the whole file. */
const RANGES_APART = process.platform !== 'darwin';

/** One try at an exclusive lock of byte `offset`: false when another open file holds it. */
function tryRange(kernel: KernelLockCalls, fd: number, offset: number): boolean {
  try {
    return kernel.tryLock(fd, offset, 1);
  } catch (error) {
    if (hasErrorCode(error, 'EACCES') || hasErrorCode(error, 'EAGAIN')) return false;
    throw error;
  }
}

let kernelCalls: KernelLockCalls | undefined;
/** Why `fs-native-extensions` did not load, once it was tried and failed. */
let kernelLoadError: unknown;

/** `fs-native-extensions`, loaded on first use; null where its native build does not load (see {@link kernelLoadError}). */
function loadKernelCalls(): KernelLockCalls | null {
  if (kernelCalls === undefined && kernelLoadError === undefined) {
    try {
      kernelCalls = createRequire(import.meta.url)('fs-native-extensions') as KernelLockCalls;
    } catch (error) {
      kernelLoadError = error ?? new Error('unknown');
    }
  }
  return kernelCalls ?? null;
}

/** A lock this process holds: how to let it go, and its file (kernel locks only). */
interface HeldLock {
  release: () => Promise<void>;
  path?: string | undefined;
}

/** Polls of a lock another process holds, in ms: from the first to the longest interval. */
const FIRST_POLL_MS = 2;
const LONGEST_POLL_MS = 20;

/**
 * One writer per session at a time, across processes, with an in-process {@link KeyedLock} in
 * front (keyed by lock path), so that writers of one process take turns (first come, first served)
 * without polling, and a free one is taken without a promise. Across processes the lock is, by
 * default, a kernel lock: an exclusive lock of the whole file `<root>/locks/<sessionId>.lock`,
 * through `fs-native-extensions` (`fcntl` `F_OFD_SETLK` open file description locks on Linux,
 * `flock` on macOS, `LockFileEx` on Windows). The kernel lets it go
 * the moment its process dies, so a crashed writer holds up nobody, and taking and releasing it
 * writes nothing to disk (two byte locks, a `stat` and the unlocks: a few µs; on Linux and macOS the
 * file is kept open between writes, see `lockFiles.ts`, elsewhere also an `open`, `fstat` and
 * `close`). The file stays while its session does; it is removed, while held, when the session (or
 * branch, for a branch's lease and events locks) is deleted, or when the work found no such session,
 * and a writer that took the lock of a removed file takes it again on the new one.
 *
 * Where the native build does not load, or with `kind: 'folder'`, the lock is a `proper-lockfile`
 * lock folder at the same path (an atomic `mkdir`, refreshed while held, broken when stale after a
 * crash), as Baton's processes took before the kernel lock. One path, two kinds: a kernel-lock
 * process finds a folder there and waits for it (breaking it once stale), and a folder-lock process
 * finds a file there and does not get in. So processes of both kinds may share a store.
 */
export class SessionLocks {
  readonly #layout: FileLayout;
  readonly #options: SessionLockOptions;
  readonly #kernel: KernelLockCalls | null;
  /** Writers of this process in turn, by lock target path (a key is dropped when no writer holds or waits). */
  readonly #queue = new KeyedLock();
  /** The locks held now, by target path. */
  readonly #held = new Map<string, HeldLock>();
  /** Writes of this process holding (or taking) a session's folder lock right now. */
  #writing = 0;
  /** Lock files kept open between writes (kernel lock on Linux and macOS only). */
  readonly #kept: KeptLockFiles | undefined;

  /**
   * @throws {ConfigurationError} when `kind` is neither `'kernel'`, `'folder'` nor undefined, or is
   *   `'kernel'` where `fs-native-extensions`' native build does not load (left undefined, the folder
   *   lock is taken there instead)
   */
  constructor(layout: FileLayout, options: SessionLockOptions) {
    const { kind } = options;
    if (kind !== undefined && kind !== 'kernel' && kind !== 'folder')
      throw new ConfigurationError(
        `FileStore's lock is 'kernel' or 'folder' (or left unset for 'kernel' where it loads), not ${JSON.stringify(kind)}.`,
      );
    this.#layout = layout;
    this.#options = options;
    this.#kernel = kind === 'folder' ? null : loadKernelCalls();
    if (kind === 'kernel' && this.#kernel === null)
      throw new ConfigurationError(
        `FileStore's lock: 'kernel' needs the native build of fs-native-extensions, which does not load here (${kernelLoadError instanceof Error ? kernelLoadError.message : String(kernelLoadError)}). Pass lock: 'folder', or leave lock unset to take the folder lock where the kernel lock is not available.`,
        { cause: kernelLoadError },
      );
    this.#kept = this.#kernel !== null && KEEP_LOCK_FILES ? new KeptLockFiles() : undefined;
  }

  /** The lock taken across processes: `'kernel'` or `'folder'`. */
  get kind(): 'kernel' | 'folder' {
    return this.#kernel === null ? 'folder' : 'kernel';
  }

  /**
   * Runs `work` while holding session `sessionId`'s lock, or the lock at `target` (another lock of the
   * session, e.g. `FileLayout.leaseLockTarget`'s).
   * @throws {ConcurrencyError} when another writer holds the lock for longer than `waitMs`, or (folder
   *   lock) the lock was lost while `work` ran (the process stalled for longer than `staleMs`)
   */
  run<T>(sessionId: string, work: () => Promise<T>, target?: string): Promise<T> {
    let path: string;
    try {
      path = target ?? this.#layout.lockTarget(sessionId);
    } catch (error) {
      return Promise.reject(error);
    }
    const free = this.#queue.tryAcquire(path);
    if (free !== undefined) return this.#inTurn(sessionId, path, work, free);
    return this.#queue.acquire(path).then((release) => this.#inTurn(sessionId, path, work, release));
  }

  /** {@link run} once this process's turn at `target` is taken (`releaseTurn` hands it on). */
  async #inTurn<T>(sessionId: string, target: string, work: () => Promise<T>, releaseTurn: () => void): Promise<T> {
    let released: Promise<void> = Promise.resolve();
    try {
      return await this.#withFileLock(sessionId, target, work, (release) => {
        released = release;
      });
    } finally {
      // The caller has its result once the work is durable; the next writer (of this process)
      // waits for the lock's release, the caller does not.
      void released.then(releaseTurn);
    }
  }

  /**
   * Removes the file of the lock at `target` (default: the session's), which the caller holds (call
   * it inside {@link run}'s work): for a deleted session or branch, so that no file is left of it. A
   * folder lock's folder goes at its release anyway; nothing is done for it.
   */
  removeHeld(sessionId: string, target = this.#layout.lockTarget(sessionId)): void {
    const held = this.#held.get(target);
    if (held?.path === undefined) return;
    try {
      unlinkSync(held.path);
    } catch {
      // Gone already, or a platform that does not remove an open file: it stays, harmless.
    }
    held.path = undefined;
  }

  /** Resolves once every queued writer of this process has finished. */
  async idle(): Promise<void> {
    await this.#queue.idle();
  }

  /** Closes the lock files kept open between writes (the store is closing; call after {@link idle}). */
  closeFiles(): void {
    this.#kept?.closeAll();
  }

  async #withFileLock<T>(
    sessionId: string,
    target: string,
    work: () => Promise<T>,
    releasing: (release: Promise<void>) => void,
  ): Promise<T> {
    let lost: Error | undefined;
    // Alone, a free folder lock is taken synchronously; beside other writes of this process (whose flushes can hold
    // the file system's journal, so that an mkdir waits for them) asynchronously, so the other work goes on.
    const alone = this.#writing === 0;
    this.#writing += 1;
    let held: HeldLock;
    try {
      held =
        this.#kernel === null
          ? {
              release: await takeFolderLock(
                this.#layout,
                this.#options,
                sessionId,
                target,
                (error) => {
                  lost = error;
                },
                alone,
              ),
            }
          : await this.#takeKernelLock(this.#kernel, sessionId, `${target}.lock`);
    } catch (error) {
      this.#writing -= 1;
      throw error;
    }
    this.#held.set(target, held);
    let result: T;
    try {
      result = await work();
    } catch (error) {
      // No such session or branch: its lock's file is not kept (a call naming a made-up id leaves nothing behind).
      if (error instanceof NotFoundError) this.removeHeld(sessionId, target);
      throw error;
    } finally {
      this.#writing -= 1;
      this.#held.delete(target);
      releasing(held.release().catch(() => {}));
    }
    if (lost !== undefined) {
      throw new ConcurrencyError(
        `The lock of session ${JSON.stringify(sessionId)} was lost while writing (the process stalled for more than ${this.#options.staleMs} ms, so another writer may have broken it). Reload the session and check the write.`,
        { cause: lost },
      );
    }
    return result;
  }

  /**
   * Takes the kernel lock of the file at `path`, polling while another process holds it, up to
   * `waitMs`. A waiter first takes the file's entry byte (where byte ranges are locked apart, all but
   * macOS, whose `flock` locks whole files) and keeps it while it waits for the lock byte: a holder
   * that lets go and wants the lock again must pass the entry too, so it cannot starve a waiter by
   * taking the lock again within the microseconds between a waiter's polls.
   */
  async #takeKernelLock(kernel: KernelLockCalls, sessionId: string, path: string): Promise<HeldLock> {
    const deadline = Date.now() + this.#options.waitMs;
    let file: LockFile | undefined;
    let entered = false;
    const letGo = () => {
      if (file === undefined) return;
      try {
        if (entered && RANGES_APART) kernel.unlock(file.fd, ENTRY_BYTE, 1);
      } finally {
        closeSync(file.fd);
        file = undefined;
        entered = false;
      }
    };
    try {
      for (let pause = FIRST_POLL_MS; ; pause = Math.min(LONGEST_POLL_MS, Math.ceil(pause * 1.5))) {
        file ??= this.#kept?.take(path) ?? this.#openLockFile(sessionId, path);
        if (file !== undefined) {
          entered ||= !RANGES_APART || tryRange(kernel, file.fd, ENTRY_BYTE);
          if (entered && tryRange(kernel, file.fd, LOCK_BYTE)) {
            // The file may have been removed (its session deleted) since it was opened: then it is not the lock.
            if (isFileAt(file, path)) {
              if (RANGES_APART) kernel.unlock(file.fd, ENTRY_BYTE, 1);
              const locked = file;
              file = undefined;
              return this.#heldLock(kernel, path, locked);
            }
            kernel.unlock(file.fd, LOCK_BYTE, 1);
            letGo();
            continue;
          }
        }
        if (Date.now() + pause > deadline) {
          throw lockHeldTooLong(sessionId, this.#options.waitMs);
        }
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    } catch (error) {
      throw error instanceof ConcurrencyError || error instanceof StoreError
        ? error
        : lockFailed(sessionId, this.#layout.locksDir, error);
    } finally {
      letGo();
    }
  }

  /** The kernel lock just taken on `file`: its release unlocks, then keeps the file open for the next write, or closes it. */
  #heldLock(kernel: KernelLockCalls, path: string, file: LockFile): HeldLock {
    const kept = this.#kept;
    const held: HeldLock = {
      path,
      release: async () => {
        let keep = false;
        try {
          kernel.unlock(file.fd, LOCK_BYTE, 1);
          // Not a file removed while held (`removeHeld`): that one is no session's lock any more.
          keep = kept !== undefined && held.path !== undefined;
        } finally {
          if (keep) kept!.keep(path, file);
          else closeSync(file.fd);
        }
      },
    };
    return held;
  }

  /**
   * Opens (making it when missing) the lock file at `path`, with its device and inode; undefined
   * when a lock folder is there (a folder-lock process's).
   */
  #openLockFile(sessionId: string, path: string): LockFile | undefined {
    for (let attempt = 0; ; attempt += 1) {
      let fd: number;
      try {
        fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o644);
      } catch (error) {
        if (hasErrorCode(error, 'ENOENT') && attempt === 0) {
          mkdirSync(this.#layout.locksDir, { recursive: true });
          continue;
        }
        if (hasErrorCode(error, 'EISDIR')) {
          this.#breakIfStale(path);
          return undefined;
        }
        throw lockFailed(sessionId, this.#layout.locksDir, error);
      }
      try {
        const { dev, ino } = fstatSync(fd);
        return { fd, dev, ino, used: true };
      } catch (error) {
        closeSync(fd);
        throw error;
      }
    }
  }

  /** A lock folder at the path (a folder-lock process's): removed once stale (its process crashed). */
  #breakIfStale(path: string): void {
    try {
      if (Date.now() - statSync(path).mtimeMs > this.#options.staleMs) rmdirSync(path);
    } catch {
      // Gone, or taken again meanwhile: the next try sees.
    }
  }
}

/** Whether `file` is (still) the file at `path`. */
function isFileAt(file: LockFile, path: string): boolean {
  try {
    const named = statSync(path);
    return named.ino === file.ino && named.dev === file.dev;
  } catch {
    return false;
  }
}
