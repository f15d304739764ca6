import type { FileDocuments } from './fileDocuments.js';
import type { LogOp, SessionImage } from './sessionImage.js';
import { appendLine, type LoadedLog, refreshLog, writeSnapshot } from './sessionLog.js';
import { readV1Session, removeV1Files } from './v1Reader.js';

/** A log is compacted once it has grown past twice its size after the last compaction, and past this many bytes. */
export const COMPACT_MIN_BYTES = 1024 * 1024;

/**
 * The session logs of one `FileStore`, with the images they describe cached in memory (least
 * recently used dropped past `cacheBytes` of log). Every call checks the file first (one `fstat`):
 * an unchanged log is served from memory, lines appended by another process are read and replayed
 * from where this process stopped, and a replaced log (compacted elsewhere) is read again, so a
 * cached image is never stale. Writers hold the session lock; readers take none.
 */
export class SessionLogs {
  readonly #docs: FileDocuments;
  readonly #cacheBytes: number;
  /** Each cached log with the bytes it was counted at. */
  readonly #cache = new Map<string, { log: LoadedLog; bytes: number }>();
  #cachedBytes = 0;

  constructor(docs: FileDocuments, cacheBytes: number) {
    this.#docs = docs;
    this.#cacheBytes = cacheBytes;
  }

  /**
   * The session as stored now (a version 1 folder read as it is), or `undefined` when it does not
   * exist. The image is shared: callers copy what they return.
   * @throws {DocumentCorruptError} naming the file and line when the session is damaged
   */
  async read(sessionId: string): Promise<SessionImage | undefined> {
    const log = await this.#refresh(sessionId);
    if (log !== undefined) return log.image;
    const v1 = await readV1Session(this.#docs, sessionId).catch(async (error: unknown) => {
      if ((await this.#refresh(sessionId)) === undefined) throw error; // not migrated meanwhile: really damaged
      return undefined;
    });
    if (v1 !== undefined) return v1;
    return (await this.#refresh(sessionId))?.image; // migrated by another process while it was read
  }

  /**
   * The session's log for a write, a version 1 folder migrated to a log first (written whole and
   * renamed into place, then the old documents removed). The caller holds the session lock.
   * @returns `undefined` when the session does not exist
   */
  async forWrite(sessionId: string): Promise<LoadedLog | undefined> {
    const log = await this.#refresh(sessionId);
    if (log !== undefined) return log;
    const v1 = await readV1Session(this.#docs, sessionId);
    if (v1 === undefined) return undefined;
    const migrated = await writeSnapshot(this.#docs.layout.logFile(sessionId), v1);
    await removeV1Files(this.#docs, sessionId);
    this.#remember(sessionId, migrated);
    return migrated;
  }

  /** Writes a new session's log (the caller holds the lock and has made the folder). */
  async create(image: SessionImage): Promise<LoadedLog> {
    const log = await writeSnapshot(this.#docs.layout.logFile(image.session.id), image);
    this.#remember(image.session.id, log);
    return log;
  }

  /**
   * Appends one line of operations (one fsync'd write; with `sync: false` durable with the next
   * synced write) and compacts the log when it has doubled. The caller holds the session lock and
   * got `log` from {@link forWrite} in that hold.
   * @returns the log after the write (a new object after a compaction)
   */
  async append(sessionId: string, log: LoadedLog, ops: readonly LogOp[], options: { sync?: boolean } = {}): Promise<LoadedLog> {
    const path = this.#docs.layout.logFile(sessionId);
    await appendLine(path, log, ops, options.sync ?? true);
    if (log.offset <= Math.max(COMPACT_MIN_BYTES, 2 * log.baseOffset)) return log;
    const compacted = await writeSnapshot(path, log.image);
    this.#remember(sessionId, compacted);
    return compacted;
  }

  /** Drops a session from the cache (it was deleted). */
  forget(sessionId: string): void {
    const entry = this.#cache.get(sessionId);
    if (entry === undefined) return;
    this.#cache.delete(sessionId);
    this.#cachedBytes -= entry.bytes;
  }

  async #refresh(sessionId: string): Promise<LoadedLog | undefined> {
    const cached = this.#cache.get(sessionId)?.log;
    let log: LoadedLog | undefined;
    try {
      log = await refreshLog(this.#docs.layout.logFile(sessionId), sessionId, cached);
    } catch (error) {
      this.forget(sessionId); // possibly half-replayed
      throw error;
    }
    if (log === undefined) this.forget(sessionId);
    else this.#remember(sessionId, log);
    return log;
  }

  #remember(sessionId: string, log: LoadedLog): void {
    this.forget(sessionId);
    this.#cache.set(sessionId, { log, bytes: log.offset });
    this.#cachedBytes += log.offset;
    for (const [id, oldest] of this.#cache) {
      if (this.#cachedBytes <= this.#cacheBytes || oldest.log === log) break;
      this.#cache.delete(id);
      this.#cachedBytes -= oldest.bytes;
    }
  }
}
