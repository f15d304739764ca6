/**
 * The lock files (`locks/<id>.lock`) a `SessionLocks` keeps open between two takings of their kernel
 * lock, so that a session's next write takes it without an `open`, an `fstat` and a `close`. A kept
 * file holds no lock while it waits (the lock is let go at every release); it is still checked after
 * each locking to be the file at its path (`stat` against the device and inode it was opened with),
 * since a deleted session's lock file is removed, and maybe made again, by any process.
 */
import { closeSync } from 'node:fs';

/**
 * Whether lock files are kept open: on Linux and macOS, whose kernel locks belong to the open file
 * (`F_OFD_SETLK`, `flock`), and where removing a file others hold open removes its name at once. Not on
 * Windows, where a file removed while another handle holds it open keeps its name, and cannot be
 * made again, until that handle closes: a kept handle would stop another process from locking a
 * session made again under the same id.
 */
export const KEEP_LOCK_FILES = process.platform === 'linux' || process.platform === 'darwin';

/** An open lock file, with the device and inode it had when opened (an open file's never change). */
export interface LockFile {
  fd: number;
  dev: number;
  ino: number;
  /** Used since the last sweep (see {@link KeptLockFiles}). */
  used: boolean;
}

/** How many lock files are kept open at most (the least recently used is closed first). */
const KEPT_FILES = 64;
/** A kept file not used for between one and two of these (ms) is closed. */
const IDLE_MS = 2000;

/**
 * The open lock files of one `SessionLocks` not in use, by path: at most {@link KEPT_FILES}, each
 * closed once idle for about {@link IDLE_MS} (a timer that does not keep the process alive), so a
 * store left without `close()` does not hold descriptors for long.
 */
export class KeptLockFiles {
  readonly #files = new Map<string, LockFile>();
  #sweep: ReturnType<typeof setTimeout> | undefined;

  /** The kept file of `path`, taken out: the caller gives it back with {@link keep} or closes it. */
  take(path: string): LockFile | undefined {
    const file = this.#files.get(path);
    if (file !== undefined) this.#files.delete(path);
    return file;
  }

  /** Keeps `file`, which holds no lock, open for the next lock of `path`. */
  keep(path: string, file: LockFile): void {
    file.used = true;
    this.#files.set(path, file);
    if (this.#files.size > KEPT_FILES) {
      const [oldest, closing] = this.#files.entries().next().value!;
      this.#files.delete(oldest);
      closeQuietly(closing.fd);
    }
    this.#sweep ??= setTimeout(() => this.#sweepIdle(), IDLE_MS).unref();
  }

  /** Closes every kept file (the store is closing). */
  closeAll(): void {
    for (const file of this.#files.values()) closeQuietly(file.fd);
    this.#files.clear();
    clearTimeout(this.#sweep);
    this.#sweep = undefined;
  }

  /** Closes the files not used since the last sweep. */
  #sweepIdle(): void {
    this.#sweep = undefined;
    for (const [path, file] of this.#files) {
      if (file.used) file.used = false;
      else {
        this.#files.delete(path);
        closeQuietly(file.fd);
      }
    }
    if (this.#files.size > 0) this.#sweep = setTimeout(() => this.#sweepIdle(), IDLE_MS).unref();
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Closed already: nothing holds it.
  }
}
