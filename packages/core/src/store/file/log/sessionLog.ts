/**
 * The session log file of `FileStore` format version 3 (`sessions/<id>/log.jsonl`): a header line,
 * then one JSON line per durable write, each line a batch of operations (`logOps.ts`) applied
 * together and sealed with its CRC-32C (`logRecord.ts`; lines are checked and replayed by
 * `logReplay.ts`). A line counts once it is complete (ends with `\n`): a line torn by a crash is ignored on
 * read and cut off by the next append. Compaction replaces the file with a snapshot of the image
 * (atomic rename), under a new log id, so a reader holding an older position reloads instead of
 * reading past its end. A log is opened from its index (`logIndex.ts`) when one matches it, replaying
 * only the lines after it; else it is replayed whole.
 */
import { randomUUID } from 'node:crypto';
import {
  type BigIntStats,
  closeSync,
  fdatasync as fdatasyncCallback,
  fstatSync,
  ftruncateSync,
  openSync,
  statSync,
  writeSync,
} from 'node:fs';
import { type FileHandle, open, stat } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { writeFileAtomic } from '../fileIo.js';
import { applySnapshotLine, applyWritten } from './logApply.js';
import { readIndex, writeIndex } from './logIndex.js';
import { encodeLine, type LogOp, snapshotLines, splitOps, withChecksums } from './logOps.js';
import { sealRecord } from './logRecord.js';
import { checkHeader, LOG_FORMAT, LOG_VERSION, messageSpanBytes, replay } from './logReplay.js';
import type { OpLocation, SessionImage } from './sessionImage.js';

const NEWLINE = 0x0a;

/** A session image and where it stands in its log file. */
export interface LoadedLog {
  image: SessionImage;
  /** The log file and its index. */
  path: string;
  indexPath: string;
  /** The file's identity when last read: inode, size, modification time (ns). */
  ino: bigint;
  size: number;
  mtimeNs: bigint;
  /** Bytes replayed: up to and including the last complete line (the rest, if any, is a torn line). */
  offset: number;
  /** Complete lines up to `offset`, the header included. */
  lines: number;
  /** The header line, bytes included; a new log id after each compaction. */
  header: string;
  /** The header's format version: 3 (every line sealed with its checksum) or 2 (checksums optional). */
  version: number;
  /**
   * The last bytes before `offset` (the end of the last record, its checksum included) as this
   * process read or wrote them: a file of the same inode and header that no longer has them was
   * rewritten in place, and is read again from the start.
   */
  tail: Buffer;
  /** Bytes of the log's `messages` operations (live: a snapshot writes every message again). */
  messageBytes: number;
  /**
   * Bytes a snapshot would write besides the messages (session and branch documents, live
   * checkpoints): exact after a compaction, estimated when the log is opened. Compaction runs
   * once the log outgrows `COMPACT_RATIO × (messageBytes + overheadBytes)` (`sessionLogs.ts`).
   */
  overheadBytes: number;
  /** The log offset the index on disk covers (0: none known). */
  indexedThrough: number;
  /** The size of that index in bytes (0: none). */
  indexBytes: number;
}

function headerLine(sessionId: string): string {
  return `${sealRecord(JSON.stringify({ format: LOG_FORMAT, version: LOG_VERSION, sessionId, log: randomUUID() }))}\n`;
}

/** How many bytes before a log's `offset` {@link LoadedLog.tail} keeps. */
const TAIL_BYTES = 32;

/** The last {@link TAIL_BYTES} of `before` followed by `added`. */
function endOf(before: Buffer, added: Buffer): Buffer {
  if (added.length >= TAIL_BYTES) return Buffer.from(added.subarray(added.length - TAIL_BYTES));
  return Buffer.concat([before, added]).subarray(-TAIL_BYTES);
}

/**
 * {@link LoadedLog.messageBytes} and an estimate of {@link LoadedLog.overheadBytes} for an image
 * just opened: its runs' bytes, and its documents' JSON and live checkpoints' bytes.
 */
export function liveBytes(image: SessionImage): { messageBytes: number; overheadBytes: number } {
  let messageBytes = 0;
  let overheadBytes = JSON.stringify(image.session).length;
  for (const branch of image.branches.values()) {
    overheadBytes += JSON.stringify(branch.branch).length;
    // An indexed loop: a cold `for…of` allocates a result object per run (it runs once per open).
    const runs = branch.runs;
    for (let i = 0; i < runs.length; i += 1) messageBytes += runs[i]!.at?.length ?? 0;
    for (const record of branch.checkpoints)
      overheadBytes += (record.documentAt?.length ?? 0) + record.writesAt.reduce((n, at) => n + at.length, 0);
  }
  return { messageBytes, overheadBytes };
}

/** Reads `length` bytes at `position`. */
async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const bytes = Buffer.alloc(length);
  const { bytesRead } = await handle.read(bytes, 0, length, position);
  return bytes.subarray(0, bytesRead);
}

/** The header line (newline included), or `undefined` while it is incomplete. */
async function readHeader(handle: FileHandle, size: number): Promise<string | undefined> {
  for (let length = Math.min(size, 512); ; length = Math.min(size, length * 4)) {
    const bytes = await readAt(handle, 0, length);
    const end = bytes.indexOf(NEWLINE);
    if (end !== -1) return bytes.toString('utf8', 0, end + 1);
    if (length >= size) return undefined;
  }
}

/**
 * Opens a session log: from its index and the lines after it when the index matches, else replayed whole.
 * @returns `undefined` when the file holds no complete session line yet
 * @throws {DocumentCorruptError} naming the line when a complete line is damaged;
 *   {@link UnsupportedSchemaVersionError} for a log of a newer format version
 */
async function openLog(
  handle: FileHandle,
  path: string,
  indexPath: string,
  sessionId: string,
): Promise<LoadedLog | undefined> {
  const stat = await handle.stat({ bigint: true });
  const size = Number(stat.size);
  const header = await readHeader(handle, size);
  if (header === undefined) return undefined;
  const version = checkHeader(header, path, sessionId);
  const headerBytes = Buffer.byteLength(header);
  const indexed = await readIndex(indexPath, handle, sessionId, header, size);
  const start = indexed?.through ?? headerBytes;
  const firstLine = indexed === undefined ? 2 : indexed.lines + 1;
  const { image, used, lines } = replay(indexed?.image, await readAt(handle, start, size - start), {
    path,
    start,
    firstLine,
    sealed: version >= 3,
  });
  if (image === undefined) return undefined;
  const offset = start + used;
  return {
    version,
    tail: await readAt(handle, Math.max(0, offset - TAIL_BYTES), Math.min(offset, TAIL_BYTES)),
    image,
    path,
    indexPath,
    ino: stat.ino,
    size,
    mtimeNs: stat.mtimeNs,
    offset,
    lines: firstLine - 1 + lines,
    header,
    ...liveBytes(image),
    indexedThrough: indexed?.through ?? 0,
    indexBytes: indexed?.bytes ?? 0,
  };
}

/**
 * The session's log as of now: `cached` itself when the file has not changed, `cached` with the
 * lines appended since replayed onto it (by any process), or a fresh open when the file was
 * replaced (compaction, a new session under the same id).
 *
 * @param cached a previous result for the same path, or `undefined`
 * @returns `undefined` when the log does not exist
 * @throws {DocumentCorruptError} naming the line when a complete line is damaged (`cached` may then
 *   be half-updated: drop it)
 */
export async function refreshLog(
  path: string,
  indexPath: string,
  sessionId: string,
  cached: LoadedLog | undefined,
): Promise<LoadedLog | undefined> {
  if (cached !== undefined) {
    // The common case, one system call: nobody wrote since this process last read or wrote.
    const now = statSync(path, { bigint: true, throwIfNoEntry: false });
    if (now === undefined) return undefined;
    if (now.ino === cached.ino && Number(now.size) === cached.size && now.mtimeNs === cached.mtimeNs) return cached;
  }
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as { code?: unknown })?.code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const stat = await handle.stat({ bigint: true });
    const size = Number(stat.size);
    if (cached !== undefined && stat.ino === cached.ino) {
      if (size === cached.size && stat.mtimeNs === cached.mtimeNs) return cached;
      const headerBytes = Buffer.byteLength(cached.header);
      if (
        size >= cached.offset &&
        size >= headerBytes &&
        (await readAt(handle, 0, headerBytes)).toString('utf8') === cached.header
      ) {
        const offset = cached.offset;
        const tail = cached.tail;
        const read = await readAt(handle, offset - tail.length, size - offset + tail.length);
        // The same inode and header but other bytes where this process's last record ended: the
        // file was rewritten in place (a backup copied over it), so it is read again from the start.
        if (read.subarray(0, tail.length).equals(tail)) {
          if (cached.offset === offset) {
            // Nobody replayed these bytes meanwhile (a writer of this process replays its own line).
            const fresh = read.subarray(tail.length);
            const { used, lines, messageBytes } = replay(cached.image, fresh, {
              path,
              start: offset,
              firstLine: cached.lines + 1,
              sealed: cached.version >= 3,
            });
            cached.messageBytes += messageBytes;
            cached.offset = offset + used;
            cached.lines += lines;
            cached.size = size;
            cached.mtimeNs = stat.mtimeNs;
            cached.tail = endOf(cached.tail, fresh.subarray(0, used));
          }
          return cached;
        }
      }
    }
    return await openLog(handle, path, indexPath, sessionId);
  } finally {
    await handle.close();
  }
}

/** `fdatasync` on the thread pool, as a promise (written out: `promisify`'s wrapper copies its arguments into a new array per call). */
function fdatasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fdatasyncCallback(fd, (error) => (error ? reject(error) : resolve()));
  });
}

/**
 * Appends one line of operations to the log, flushed with `fdatasync`, first cutting off a torn line. The caller
 * holds the session lock and passes the log as just refreshed. `log` is updated: the line is
 * applied to the image (each operation copied from its JSON as written, so the image equals a fresh
 * read; a checkpoint's document parsed only when needed, see `applyWritten`), each operation
 * remembered by location.
 * @returns the bytes written
 */
export async function appendLine(log: LoadedLog, ops: readonly LogOp[]): Promise<number> {
  const lineOps = splitOps(ops);
  const { bytes, spans, parts } = encodeLine(lineOps);
  // Opening, writing into the page cache and stat-ing take microseconds: done synchronously (no
  // thread-pool round trips); the flush, which waits for the disk, is asynchronous, and the
  // bookkeeping that does not change the image (the file's new size, each operation's checksum)
  // runs while it waits. The image changes only once the line is durable.
  const fd = openSync(log.path, 'r+');
  const offset = log.offset;
  const line = log.lines + 1;
  try {
    if (log.size > offset) ftruncateSync(fd, offset);
    writeSync(fd, bytes, 0, bytes.length, offset);
    const flushed = fdatasync(fd);
    let stat: BigIntStats;
    let locations: OpLocation[];
    let tail: Buffer;
    try {
      stat = fstatSync(fd, { bigint: true });
      tail = endOf(log.tail, bytes);
      // As `withChecksums` gives them, without a second copy of each location.
      locations = spans.map(({ offset: at, length }) => ({
        offset: offset + at,
        length,
        line,
        crc: crc32(bytes.subarray(at, at + length)),
      }));
    } catch (error) {
      await flushed.catch(() => undefined); // the file stays open until the flush is done
      throw error;
    }
    await flushed;
    if (log.offset === offset) {
      applyWritten(log.image, lineOps, parts, `line ${line} of ${log.path}`, new Date().toISOString(), locations);
      log.offset = offset + bytes.length;
      log.lines = line;
      log.messageBytes += messageSpanBytes(lineOps, spans);
      log.tail = tail;
    }
    log.size = Number(stat.size);
    log.mtimeNs = stat.mtimeNs;
    log.ino = stat.ino;
  } finally {
    closeSync(fd);
  }
  return bytes.length;
}

/**
 * Writes `image` as a new log (a snapshot: compaction, the v1 migration, a new session) and
 * replaces the file atomically (temp file, fsync, rename, fsync of the folder). Every message and
 * checkpoint of `image` must be read first. The image returned is built from the snapshot's
 * operations, each by location.
 * @returns the log as written
 */
export async function writeSnapshot(path: string, indexPath: string, image: SessionImage): Promise<LoadedLog> {
  const header = headerLine(image.session.id);
  const headerBytes = Buffer.from(header, 'utf8');
  const lines: Buffer[] = [headerBytes];
  let offset = headerBytes.length;
  let lineNo = 1;
  let fresh: SessionImage | undefined;
  let messageBytes = 0;
  const savedAt = new Date().toISOString();
  for (const ops of snapshotLines(image)) {
    const { bytes, spans } = encodeLine(ops);
    messageBytes += messageSpanBytes(ops, spans);
    lineNo += 1;
    const line = lineNo;
    const locations = withChecksums(
      spans.map((span) => ({ offset: offset + span.offset, length: span.length, line })),
      bytes,
      offset,
    );
    // The operations themselves (from a validated image, so they equal what a fresh read of the snapshot gives).
    fresh = applySnapshotLine(fresh, ops, `line ${line} of ${path}`, savedAt, locations);
    lines.push(bytes);
    offset += bytes.length;
  }
  const content = Buffer.concat(lines, offset);
  await writeFileAtomic(path, content);
  const written = await stat(path, { bigint: true });
  return {
    image: fresh!,
    path,
    indexPath,
    ino: written.ino,
    size: Number(written.size),
    mtimeNs: written.mtimeNs,
    offset,
    lines: lineNo,
    header,
    version: LOG_VERSION,
    tail: endOf(Buffer.alloc(0), content),
    messageBytes,
    overheadBytes: offset - messageBytes,
    indexedThrough: 0,
    indexBytes: 0,
  };
}

/**
 * Writes the index of `log` (its image as of `log.offset`), which must be flushed to disk; records
 * it in `log.indexedThrough` and `log.indexBytes`. See `logIndex.ts`.
 */
export async function indexLog(log: LoadedLog): Promise<void> {
  const handle = await open(log.path, 'r');
  try {
    if ((await handle.stat({ bigint: true })).ino !== log.ino) return;
    const bytes = await writeIndex(log.indexPath, handle, log.image, {
      header: log.header,
      through: log.offset,
      lines: log.lines,
    });
    if (bytes === undefined) return;
    log.indexedThrough = log.offset;
    log.indexBytes = bytes;
  } finally {
    await handle.close();
  }
}
