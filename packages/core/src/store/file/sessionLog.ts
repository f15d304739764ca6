/**
 * The session log file of `FileStore` format version 2 (`sessions/<id>/log.jsonl`): a header line,
 * then one JSON line per durable write, each line a batch of {@link LogOp}s applied together. A line
 * counts once it is complete (ends with `\n`): a line torn by a crash is ignored on read and cut off
 * by the next append. Compaction replaces the file with a snapshot of the image (atomic rename),
 * under a new log id, so a reader holding an older position reloads instead of reading past its end.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, fdatasync as fdatasyncCallback, fstatSync, ftruncateSync, openSync, statSync, writeSync } from 'node:fs';
import { type FileHandle, open, stat } from 'node:fs/promises';
import { promisify } from 'node:util';
import { DocumentCorruptError, StoreError, UnsupportedSchemaVersionError } from '../../errors.js';
import { hasErrorCode, writeFileAtomic } from './fileIo.js';
import { applyLine, type LogOp, type SessionImage, snapshotLines } from './sessionImage.js';

/** The `format` of a session log header. */
export const LOG_FORMAT = 'baton-filestore-session-log';
/** The format version this code writes (version 1 is the folder of documents read by `v1Reader.ts`). */
export const LOG_VERSION = 2;

const NEWLINE = 0x0a;

/** A session image and where it stands in its log file. */
export interface LoadedLog {
  image: SessionImage;
  /** The file's identity when last read: inode, size, modification time (ns). */
  ino: bigint;
  size: number;
  mtimeNs: bigint;
  /** Bytes replayed: up to and including the last complete line (the rest, if any, is a torn line). */
  offset: number;
  /** The header line, bytes included; a new log id after each compaction. */
  header: string;
  /** `offset` right after the last compaction or full read (compaction runs when the log doubles past it). */
  baseOffset: number;
}

function headerLine(sessionId: string): string {
  return `${JSON.stringify({ format: LOG_FORMAT, version: LOG_VERSION, sessionId, log: randomUUID() })}\n`;
}

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new DocumentCorruptError(`The ${where} is damaged (${(cause as Error).message}); restore the file from a backup.`, where, '(root)', { cause });
  }
}

function checkHeader(text: string, path: string, sessionId: string): void {
  const header = parseJson(text, `header of ${path}`) as { format?: unknown; version?: unknown; sessionId?: unknown };
  if (header?.format !== LOG_FORMAT) throw new DocumentCorruptError(`The file ${path} is not a Baton session log.`, path, 'format');
  if (typeof header.version !== 'number') throw new DocumentCorruptError(`The session log ${path} has no format version in its header.`, path, 'version');
  // The header's version is the schema version of every document in the log (sessions, branches, messages, checkpoints).
  if (header.version > LOG_VERSION) throw new UnsupportedSchemaVersionError('session log', header.version, LOG_VERSION, `session log ${path}`);
  if (header.sessionId !== sessionId) throw new DocumentCorruptError(`The session log ${path} belongs to session ${JSON.stringify(header.sessionId)}; move it back where it belongs.`, path, 'sessionId');
}

/**
 * Replays complete lines of `bytes` (read from file offset `start`) onto `image`; lines are named
 * by number from `firstLine`, or by byte offset when it is `NaN` (a read from the middle).
 * @returns the image and how many bytes the complete lines take
 */
function replay(image: SessionImage | undefined, bytes: Buffer, start: number, firstLine: number, path: string): { image: SessionImage | undefined; used: number } {
  const used = bytes.lastIndexOf(NEWLINE) + 1;
  if (used === 0) return { image, used };
  const savedAt = new Date().toISOString();
  let current = image;
  let lineNo = firstLine;
  let from = 0;
  while (from < used) {
    const end = bytes.indexOf(NEWLINE, from);
    const where = Number.isNaN(firstLine) ? `line at byte ${start + from} of ${path}` : `line ${lineNo} of ${path}`;
    current = applyLine(current, parseJson(bytes.toString('utf8', from, end), where), where, true, savedAt);
    from = end + 1;
    lineNo += 1;
  }
  return { image: current, used };
}

/**
 * Reads a session log whole.
 * @returns `undefined` when the file does not exist or holds no complete session line yet
 * @throws {DocumentCorruptError} naming the line when a complete line is damaged;
 *   {@link UnsupportedSchemaVersionError} for a log of a newer format version
 */
async function readWhole(handle: FileHandle, path: string, sessionId: string): Promise<LoadedLog | undefined> {
  const stat = await handle.stat({ bigint: true });
  const bytes = await handle.readFile();
  const headerEnd = bytes.indexOf(NEWLINE);
  if (headerEnd === -1) return undefined;
  const header = bytes.toString('utf8', 0, headerEnd + 1);
  checkHeader(header.slice(0, -1), path, sessionId);
  const { image, used } = replay(undefined, bytes.subarray(headerEnd + 1), headerEnd + 1, 2, path);
  if (image === undefined) return undefined;
  const offset = headerEnd + 1 + used;
  return { image, ino: stat.ino, size: bytes.length, mtimeNs: stat.mtimeNs, offset, header, baseOffset: offset };
}

/**
 * The session's log as of now: `cached` itself when the file has not changed, `cached` with the
 * lines appended since replayed onto it (by any process), or a fresh read when the file was
 * replaced (compaction, a new session under the same id).
 *
 * @param cached a previous result for the same path, or `undefined`
 * @returns `undefined` when the log does not exist
 * @throws {DocumentCorruptError} naming the line when a complete line is damaged (`cached` may then
 *   be half-updated: drop it)
 */
export async function refreshLog(path: string, sessionId: string, cached: LoadedLog | undefined): Promise<LoadedLog | undefined> {
  if (cached !== undefined) {
    // The common case, one system call: nobody wrote since this process last read or wrote.
    const now = await statIfPresent(path);
    if (now === undefined) return undefined;
    if (now.ino === cached.ino && Number(now.size) === cached.size && now.mtimeNs === cached.mtimeNs) return cached;
  }
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) return undefined;
    throw error;
  }
  try {
    const stat = await handle.stat({ bigint: true });
    const size = Number(stat.size);
    if (cached !== undefined && stat.ino === cached.ino) {
      if (size === cached.size && stat.mtimeNs === cached.mtimeNs) return cached;
      const headerBytes = Buffer.byteLength(cached.header);
      if (size >= cached.offset && size >= headerBytes) {
        const head = Buffer.alloc(headerBytes);
        await handle.read(head, 0, headerBytes, 0);
        if (head.toString('utf8') === cached.header) {
          const offset = cached.offset;
          const fresh = Buffer.alloc(size - offset);
          const { bytesRead } = await handle.read(fresh, 0, fresh.length, offset);
          if (cached.offset === offset) {
            // Nobody replayed these bytes meanwhile (a writer of this process replays its own line).
            const { used } = replay(cached.image, fresh.subarray(0, bytesRead), offset, Number.NaN, path);
            cached.offset = offset + used;
            cached.size = size;
            cached.mtimeNs = stat.mtimeNs;
          }
          return cached;
        }
      }
    }
    return await readWhole(handle, path, sessionId);
  } finally {
    await handle.close();
  }
}

/** `stat` of the log, synchronous (one system call of microseconds, on every store call); `undefined` when it does not exist. */
async function statIfPresent(path: string) {
  return statSync(path, { bigint: true, throwIfNoEntry: false });
}

const fdatasync = promisify(fdatasyncCallback);

/**
 * Appends one line of operations to the log, flushed with `fdatasync` (unless `sync` is false: the
 * line is then made durable by the next synced append), first cutting off a torn line. The caller
 * holds the session lock and passes the log as just refreshed. `log` is updated: the line is
 * replayed onto the image (parsed back from its JSON, so the image equals a fresh read).
 * @returns the bytes written
 */
export async function appendLine(path: string, log: LoadedLog, ops: readonly LogOp[], sync = true): Promise<number> {
  const text = `${JSON.stringify({ ops })}\n`;
  const bytes = Buffer.from(text, 'utf8');
  // Opening, writing into the page cache and stat-ing take microseconds: done synchronously (no
  // thread-pool round trips); the flush, which waits for the disk, is asynchronous.
  const fd = openSync(path, 'r+');
  const offset = log.offset;
  try {
    if (log.size > offset) ftruncateSync(fd, offset);
    writeSync(fd, bytes, 0, bytes.length, offset);
    if (sync) await fdatasync(fd);
    const stat = fstatSync(fd, { bigint: true });
    if (log.offset === offset) {
      applyLine(log.image, JSON.parse(text), `line appended to ${path}`, false, new Date().toISOString());
      log.offset = offset + bytes.length;
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
 * replaces the file atomically (temp file, fsync, rename, fsync of the folder). The image is kept
 * as it is: it was replayed from JSON, so it equals what a fresh read of the snapshot gives.
 * @returns the log as written, describing `image`
 */
export async function writeSnapshot(path: string, image: SessionImage): Promise<LoadedLog> {
  const header = headerLine(image.session.id);
  const body = snapshotLines(image)
    .map((ops) => `${JSON.stringify({ ops })}\n`)
    .join('');
  const text = header + body;
  await writeFileAtomic(path, text);
  const written = await stat(path, { bigint: true });
  const offset = Buffer.byteLength(text);
  return { image, ino: written.ino, size: Number(written.size), mtimeNs: written.mtimeNs, offset, header, baseOffset: offset };
}
