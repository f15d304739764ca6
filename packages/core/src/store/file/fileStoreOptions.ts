/** Options of `FileStore` (`new FileStore(options)`). */
export interface FileStoreOptions {
  /** The root folder; created when missing. Relative paths resolve against the working directory. */
  directory: string;
  /**
   * The lock that keeps one writer per session across processes. `'kernel'` (the default): a lock of
   * the file `locks/<sessionId>.lock` that the operating system lets go the moment its process dies
   * (`fs-native-extensions`: `fcntl` open file description locks on Linux, `flock` on macOS,
   * `LockFileEx` on Windows), and that writes nothing to disk. `'folder'`: a `proper-lockfile` lock
   * folder at the same path, broken once not refreshed for `lockStaleMs` after a crash. Left unset,
   * the folder lock is taken where the native build does not load (`FileStore.lock` tells which);
   * `'kernel'` asked for there throws `ConfigurationError`. Processes of both kinds may share a folder.
   */
  lock?: 'kernel' | 'folder';
  /**
   * A lock folder (`lock: 'folder'`, or one left by a Baton process from before the kernel lock) not
   * refreshed for this long is taken to belong to a crashed process and is broken, in milliseconds
   * (at least 2000; default 10 000).
   */
  lockStaleMs?: number;
  /** How long a write waits for another writer's lock before a `ConcurrencyError`, in milliseconds (default `lockStaleMs + 5000`). */
  lockWaitMs?: number;
  /**
   * Bytes of session logs whose sessions are kept in memory (least recently used dropped first;
   * default 64 MiB). A cached session is checked against its file (one `fstat`) on every call, so
   * it is never stale; this only bounds memory.
   */
  cacheBytes?: number;
  /**
   * A session log's index (`log.index.json`, where each message run and checkpoint is in the log)
   * is written again once this many bytes (and at least as many as the index itself holds) were
   * appended after the part it covers, in bytes (default 64 KiB). Opening a session replays at
   * most about this much of its log; smaller values index more often (each index write costs one
   * file write and rename, no flush).
   */
  indexEveryBytes?: number;
  /** The largest asset `putAsset` accepts, in bytes (default 25 MiB); larger ones throw `AssetTooLargeError`. */
  maxAssetBytes?: number;
}
