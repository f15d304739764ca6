import { MAIN_BRANCH } from '../../../conversation/session.js';
import { DocumentCorruptError, LogRecordCorruptError } from '../../../errors.js';
import type { FileDocuments } from '../fileDocuments.js';
import { readV1Session, removeV1Files } from '../v1/v1Reader.js';
import type { LogOp } from './logOps.js';
import { LogReplacedError, loadCheckpointRecords, loadRuns } from './logRanges.js';
import { checkSessionLog, keepAside, type SessionLogRepair, type SessionLogReport } from './logRepair.js';
import { type BranchImage, type CheckpointRecord, runsBetween, type SessionImage } from './sessionImage.js';
import { appendLine, indexLog, type LoadedLog, liveBytes, refreshLog, writeSnapshot } from './sessionLog.js';

/** A log is never compacted below this many bytes. */
export const COMPACT_MIN_BYTES = 16 * 1024;
/**
 * A log is compacted once it is more than this many times what a snapshot of it would write (its
 * messages' bytes and, as of the last compaction, everything else live). Right after a compaction
 * the ratio is 1, so the log grows by at least this factor less one between two compactions: the
 * cost of compacting is amortised over the writes, a constant per byte written.
 */
export const COMPACT_RATIO = 1.25;
/** By default, a log's index is written again once this many bytes were appended after the part it covers. */
export const INDEX_EVERY_BYTES = 64 * 1024;

/** Options of {@link SessionLogs}. */
export interface SessionLogsOptions {
  /** Bytes of logs whose images are kept in memory. */
  cacheBytes: number;
  /** Bytes appended after the part of a log its index covers before the index is written again (at least the index's own size). */
  indexEveryBytes: number;
}

/** Reads the parts of an image a call needs that are still on disk (see `logRanges.ts`). */
export interface ImageLoader {
  /** The branch's own messages of `fromSeq..throughSeq`. */
  messages(branch: BranchImage, fromSeq: number, throughSeq: number): Promise<void>;
  /** The documents and pending writes of these checkpoints of the branch. */
  checkpoints(branch: BranchImage, records: readonly CheckpointRecord[]): Promise<void>;
}

/** The loader of an image of `log` (nothing to read for an image outside a log: a format 1 folder). */
function loaderOf(log: LoadedLog | undefined): ImageLoader {
  if (log === undefined) return { messages: async () => {}, checkpoints: async () => {} };
  return {
    messages: (branch, fromSeq, throughSeq) =>
      loadRuns(log, branch.branch.id, runsBetween(branch, fromSeq, throughSeq)),
    checkpoints: (branch, records) => loadCheckpointRecords(log, branch.branch.id, records),
  };
}

/** How many times a read starts over when the log it read was compacted by another process meanwhile. */
const READ_ATTEMPTS = 8;

/**
 * The session logs of one `FileStore`, with the images they describe cached in memory (least
 * recently used dropped past `cacheBytes` of log). Every call checks the file first (one `fstat`):
 * an unchanged log is served from memory, lines appended by another process are read and replayed
 * from where this process stopped, and a replaced log (compacted elsewhere) is opened again, so a
 * cached image is never stale. An image holds message bodies and checkpoint documents once a call
 * read them; the rest stays on disk until needed. Writers hold the session lock; readers take none.
 */
export class SessionLogs {
  readonly #docs: FileDocuments;
  readonly #cacheBytes: number;
  readonly #indexEveryBytes: number;
  /** Each cached log with the bytes it was counted at. */
  readonly #cache = new Map<string, { log: LoadedLog; bytes: number }>();
  #cachedBytes = 0;

  constructor(docs: FileDocuments, options: SessionLogsOptions) {
    this.#docs = docs;
    this.#cacheBytes = options.cacheBytes;
    this.#indexEveryBytes = options.indexEveryBytes;
  }

  /**
   * The session as stored now (a version 1 folder read as it is), or `undefined` when it does not
   * exist. The image is shared: callers copy what they return. Its messages and checkpoint
   * documents may be on disk: use {@link view} to read them.
   * @throws {DocumentCorruptError} naming the file and line when the session is damaged
   */
  async read(sessionId: string): Promise<SessionImage | undefined> {
    return (await this.#current(sessionId)).image;
  }

  /**
   * Runs `use` on the session as stored now, with a loader for the parts of it on disk; starts
   * over when the log was compacted by another process while `use` read it.
   */
  async view<T>(
    sessionId: string,
    use: (image: SessionImage | undefined, load: ImageLoader) => Promise<T>,
  ): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      const { image, log } = await this.#current(sessionId);
      try {
        return await use(image, loaderOf(log));
      } catch (error) {
        if (!(error instanceof LogReplacedError) || attempt >= READ_ATTEMPTS) throw error;
      }
    }
  }

  /** The loader for an image of a log returned by {@link forWrite} or {@link append} (its file cannot change under the lock). */
  loader(log: LoadedLog): ImageLoader {
    return loaderOf(log);
  }

  async #current(sessionId: string): Promise<{ image: SessionImage | undefined; log: LoadedLog | undefined }> {
    const log = await this.#refresh(sessionId);
    if (log !== undefined) return { image: log.image, log };
    const v1 = await readV1Session(this.#docs, sessionId).catch(async (error: unknown) => {
      if ((await this.#refresh(sessionId)) === undefined) throw error; // not migrated meanwhile: really damaged
      return undefined;
    });
    if (v1 !== undefined) return { image: v1, log: undefined };
    const migrated = await this.#refresh(sessionId); // migrated by another process while it was read
    return { image: migrated?.image, log: migrated };
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
    const migrated = await this.#snapshot(sessionId, v1);
    await removeV1Files(this.#docs, sessionId);
    return migrated;
  }

  /** Writes a new session's log (the caller holds the lock and has made the folder). */
  async create(image: SessionImage): Promise<LoadedLog> {
    return this.#snapshot(image.session.id, image);
  }

  /**
   * Appends one line of operations (one fsync'd write), and compacts the log when a prune or delete
   * (a line without messages or a checkpoint) left it over {@link COMPACT_RATIO} times its live bytes.
   * Two kinds of upkeep are left for {@link maintain}, which the caller runs after its write returns:
   * compacting a log that outgrew its live bytes by a line with messages or a checkpoint (a turn's, its
   * prune included), and writing the log's index again once enough was appended since. Both are linear
   * in the session, and the write that happens to cross a threshold (a customer's turn) must not pay
   * for them. The caller holds the session lock and got `log` from {@link forWrite} in that hold.
   * @returns the log after the write (a new object after a compaction) and whether {@link maintain} has work
   */
  async append(sessionId: string, log: LoadedLog, ops: readonly LogOp[]): Promise<{ log: LoadedLog; upkeep: boolean }> {
    await appendLine(log, ops);
    const deletes = ops.some((op) => op.op === 'deleteCheckpoints' || op.op === 'deleteBranches');
    if (deletes || log.offset > this.#compactAt(log)) {
      // What a snapshot would write, estimated again from the image: checkpoints kept since the
      // last compaction are live too (compacting a log that holds little else would free nothing),
      // and a prune or delete makes what it removed garbage at once.
      Object.assign(log, liveBytes(log.image));
    }
    const turnWrite = ops.some((op) => op.op === 'messages' || op.op === 'checkpoint');
    if (deletes && !turnWrite && log.offset > this.#compactAt(log)) {
      const compacted = await this.#compact(sessionId, log);
      if (compacted !== undefined) return { log: compacted, upkeep: false };
    }
    return { log, upkeep: log.offset > this.#compactAt(log) || this.#indexDue(log) };
  }

  /**
   * The upkeep {@link append} leaves: compacts the session's log when it is over
   * {@link COMPACT_RATIO} times its live bytes, else writes its index again when due. The log is
   * brought up to date first, so a write of another process meanwhile counts. The caller holds the
   * session lock.
   */
  async maintain(sessionId: string): Promise<void> {
    const log = await this.forWrite(sessionId);
    if (log === undefined) return;
    if (log.offset > this.#compactAt(log)) {
      Object.assign(log, liveBytes(log.image));
      if (log.offset > this.#compactAt(log) && (await this.#compact(sessionId, log)) !== undefined) return;
    }
    if (this.#indexDue(log)) await this.#index(log);
  }

  /**
   * Whether the log's index is due to be written again. Only a flushed prefix is indexed (the index
   * must never describe bytes a power loss could take back). At least as many bytes of log as the
   * index holds come between two index writes, so rewriting the index never costs more than the log
   * appends.
   */
  #indexDue(log: LoadedLog): boolean {
    return log.offset - log.indexedThrough >= Math.max(this.#indexEveryBytes, log.indexBytes);
  }

  /**
   * Checks the session's log record by record (the whole file, not its index).
   * @returns `undefined` when the session has no log (it does not exist, or is a version 1 folder)
   */
  async verify(sessionId: string): Promise<SessionLogReport | undefined> {
    return (await checkSessionLog(this.#docs.layout.logFile(sessionId), sessionId))?.report;
  }

  /**
   * Salvages a damaged log: its intact records are written as a new log (by rename, indexed when
   * long), after the damaged file was kept aside (see `keepAside`). An intact log is left as it is.
   * The caller holds the session lock.
   * @returns `undefined` when the session has no log
   * @throws {LogRecordCorruptError} when the records before the damage do not hold the session and its main branch (nothing to keep)
   */
  async repair(sessionId: string): Promise<SessionLogRepair | undefined> {
    const path = this.#docs.layout.logFile(sessionId);
    const checked = await checkSessionLog(path, sessionId);
    if (checked === undefined) return undefined;
    const { report, image } = checked;
    if (report.damage === undefined) return { ...report, repaired: false };
    if (image === undefined || !image.branches.has(MAIN_BRANCH)) {
      throw new LogRecordCorruptError(
        `${report.damage.message.replace(/ To keep them, .*$/, '')} The records before it do not hold the session and its main branch, so there is nothing to salvage: restore ${path} from a backup, or delete the session.`,
        path,
        report.damage.record,
        report.damage.offset,
        {},
      );
    }
    const movedTo = await keepAside(path);
    this.forget(sessionId);
    await this.#snapshot(sessionId, image);
    return { ...report, repaired: true, movedTo };
  }

  /** The log size past which {@link append} compacts. */
  #compactAt(log: LoadedLog): number {
    return Math.max(COMPACT_MIN_BYTES, COMPACT_RATIO * (log.messageBytes + log.overheadBytes));
  }

  /** Drops a session from the cache (it was deleted). */
  forget(sessionId: string): void {
    const entry = this.#cache.get(sessionId);
    if (entry === undefined) return;
    this.#cache.delete(sessionId);
    this.#cachedBytes -= entry.bytes;
  }

  /**
   * Rewrites the log as a snapshot of its image (every message and checkpoint read first). When a
   * part cannot be read (a damaged line the index let the session open past), the log is left as
   * it is, with its damage, and compaction is put off until it doubles again: the line just
   * appended is durable, so the write must not fail.
   * @returns the compacted log, or `undefined` when it was put off
   */
  async #compact(sessionId: string, log: LoadedLog): Promise<LoadedLog | undefined> {
    const load = loaderOf(log);
    try {
      for (const branch of log.image.branches.values()) {
        await load.messages(branch, 1, Number.POSITIVE_INFINITY);
        await load.checkpoints(branch, branch.checkpoints);
      }
    } catch (error) {
      if (!(error instanceof DocumentCorruptError)) throw error;
      log.overheadBytes = log.offset; // put off until the log has about doubled
      return undefined;
    }
    return this.#snapshot(sessionId, log.image);
  }

  /** Writes `image` as the session's log (see `writeSnapshot`), indexed when it is long. */
  async #snapshot(sessionId: string, image: SessionImage): Promise<LoadedLog> {
    const layout = this.#docs.layout;
    const log = await writeSnapshot(layout.logFile(sessionId), layout.logIndexFile(sessionId), image);
    if (log.offset >= this.#indexEveryBytes) await this.#index(log);
    this.#remember(sessionId, log);
    return log;
  }

  /** Writes the log's index; a failure only makes the next open slower, so it is not reported. */
  async #index(log: LoadedLog): Promise<void> {
    await indexLog(log).catch(() => undefined);
  }

  async #refresh(sessionId: string): Promise<LoadedLog | undefined> {
    const cached = this.#cache.get(sessionId)?.log;
    const layout = this.#docs.layout;
    let log: LoadedLog | undefined;
    try {
      log = await refreshLog(layout.logFile(sessionId), layout.logIndexFile(sessionId), sessionId, cached);
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
