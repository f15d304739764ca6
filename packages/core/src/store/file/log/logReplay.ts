/**
 * Reading a `FileStore` session log's records: its header checked, then each line's seal
 * (`logRecord.ts`) checked before it is parsed and replayed onto a session image. The first damaged
 * record stops the replay with a `LogRecordCorruptError` saying which record it is and what the
 * records before it hold; a torn last line a crash left is ignored.
 */
import { DocumentCorruptError, LogRecordCorruptError, UnsupportedSchemaVersionError } from '../../../errors.js';
import { applyLine } from './logApply.js';
import { DAMAGED_LINE_ADVICE, describeIntact, intactThroughSeq, unparsable } from './logDamage.js';
import { locateOps, withChecksums } from './logOps.js';
import { checkRecord, SEAL_BYTES } from './logRecord.js';
import type { SessionImage } from './sessionImage.js';

/** The `format` of a session log header. */
export const LOG_FORMAT = 'baton-filestore-session-log';
/**
 * The format version this code writes: 3 seals every line with its CRC-32C (`logRecord.ts`).
 * Version 2 logs (lines without checksums) are read as before, and appended to with sealed lines
 * until their next compaction rewrites them as version 3. Version 1 is the folder of documents
 * read by `v1Reader.ts`.
 */
export const LOG_VERSION = 3;

const NEWLINE = 0x0a;

/**
 * Checks a log's header line (newline included) and returns its format version.
 * @throws {LogRecordCorruptError} when the header's checksum does not match, or a version 3 header has none
 */
export function checkHeader(header: string, path: string, sessionId: string): number {
  const bytes = Buffer.from(header, 'utf8');
  const seal = checkRecord(bytes, 0, bytes.length - 1);
  const damaged = (problem: string) =>
    new LogRecordCorruptError(
      `The line 1 of ${path} (its header) is damaged (${problem}); no record precedes it to salvage: restore the file from a backup, or delete the session. Nothing in it was changed, and no other session is affected.`,
      path,
      1,
      0,
      {},
    );
  const mismatch =
    seal.kind === 'mismatch' ? `its CRC-32C is ${hex(seal.actual)}, its checksum says ${hex(seal.stored)}` : undefined;
  let parsed: { format?: unknown; version?: unknown; sessionId?: unknown };
  try {
    parsed = JSON.parse(header.slice(0, -1));
  } catch (cause) {
    if (mismatch !== undefined) throw damaged(mismatch);
    throw unparsable(`line 1 of ${path}`, cause, 0, {});
  }
  if (parsed?.format !== LOG_FORMAT && mismatch === undefined)
    throw new DocumentCorruptError(`The file ${path} is not a Baton session log.`, path, 'format');
  // The header's version is the schema version of every document in the log (sessions, branches, messages, checkpoints).
  // A newer one is refused by name first: its header may be sealed differently.
  if (typeof parsed?.version === 'number' && parsed.version > LOG_VERSION)
    throw new UnsupportedSchemaVersionError('session log', parsed.version, LOG_VERSION, `session log ${path}`);
  if (mismatch !== undefined) throw damaged(mismatch);
  if (typeof parsed.version !== 'number')
    throw new DocumentCorruptError(`The session log ${path} has no format version in its header.`, path, 'version');
  if (parsed.version >= 3 && seal.kind !== 'sealed') throw damaged('it has lost its checksum');
  if (parsed.sessionId !== sessionId)
    throw new DocumentCorruptError(
      `The session log ${path} belongs to session ${JSON.stringify(parsed.sessionId)}; move it back where it belongs.`,
      path,
      'sessionId',
    );
  return parsed.version;
}

const hex = (crc: number): string => crc.toString(16).padStart(8, '0');

/** Where replayed bytes came from. */
interface ReplaySource {
  path: string;
  /** File offset of the first byte, and the number of the first line there. */
  start: number;
  firstLine: number;
  /** Whether every line must be sealed (a version 3 log). */
  sealed: boolean;
}

/**
 * Replays the complete lines of `bytes` onto `image`, each operation remembered by location, each
 * line's checksum checked first. Bytes after the last newline are a torn line a crash left (a
 * prefix of a write, or zeros where a power loss lost the last page), ignored — unless they hold a
 * whole sealed record followed by bytes other than zeros, which no crash leaves: that is a record
 * whose newline was damaged.
 * @returns the image, how many bytes the complete lines take, and how many lines they are
 * @throws {LogRecordCorruptError} naming the first damaged line, with what the lines before it hold
 */
export function replay(
  image: SessionImage | undefined,
  bytes: Buffer,
  source: ReplaySource,
): { image: SessionImage | undefined; used: number; lines: number; messageBytes: number } {
  const { path, start, firstLine, sealed } = source;
  const used = bytes.lastIndexOf(NEWLINE) + 1;
  const savedAt = new Date().toISOString();
  let current = image;
  let lineNo = firstLine;
  let from = 0;
  let messageBytes = 0;
  while (from < used) {
    const end = bytes.indexOf(NEWLINE, from);
    const where = `line ${lineNo} of ${path}`;
    const offset = start + from;
    const seal = checkRecord(bytes, from, end);
    if (seal.kind === 'mismatch' || (sealed && seal.kind === 'unsealed')) {
      const problem =
        seal.kind === 'mismatch'
          ? `its CRC-32C is ${hex(seal.actual)}, its checksum says ${hex(seal.stored)}`
          : 'it has lost its checksum';
      throw damagedRecord(where, offset, problem, current, lineNo);
    }
    const text = bytes.toString('utf8', from, end);
    let line: unknown;
    try {
      line = JSON.parse(text);
    } catch (cause) {
      throw unparsable(where, cause, offset, intactThroughSeq(current, lineNo));
    }
    const ops = (line as { ops?: unknown })?.ops;
    // The line as `locateOps` reads it: without its seal (or, unsealed, without its closing brace).
    const body = seal.kind === 'sealed' ? text.slice(0, text.length - SEAL_BYTES) : text.slice(0, -1);
    try {
      const locations = Array.isArray(ops)
        ? withChecksums(locateOps(ops, body, offset, lineNo, end - from), bytes, start)
        : undefined;
      current = applyLine(current, line, where, true, savedAt, locations);
      if (locations !== undefined) messageBytes += messageSpanBytes(ops as { op?: unknown }[], locations);
    } catch (error) {
      if (!(error instanceof DocumentCorruptError)) throw error;
      throw new LogRecordCorruptError(error.message, path, lineNo, offset, intactThroughSeq(current, lineNo), {
        field: error.field,
        cause: error,
      });
    }
    from = end + 1;
    lineNo += 1;
  }
  const tornEnd = sealedRecordEnd(bytes, used);
  // Zeros after it are a power loss's (a file whose size was kept but whose last page was not): torn.
  if (tornEnd !== undefined && tornEnd < bytes.length && bytes.subarray(tornEnd).some((byte) => byte !== 0))
    throw damagedRecord(
      `line ${lineNo} of ${path}`,
      start + used,
      `a whole record followed by ${bytes.length - tornEnd} more byte(s) where its newline should be`,
      current,
      lineNo,
    );
  return { image: current, used, lines: lineNo - firstLine, messageBytes };
}

/** Where a whole sealed record starting at `from` ends (before any newline), if the bytes from `from` on start with one. */
function sealedRecordEnd(bytes: Buffer, from: number): number | undefined {
  const key = Buffer.from(',"crc32c":"');
  for (let at = bytes.indexOf(key, from); at !== -1; at = bytes.indexOf(key, at + 1)) {
    const end = at + SEAL_BYTES;
    if (end <= bytes.length && checkRecord(bytes, from, end).kind === 'sealed') return end;
  }
  return undefined;
}

function damagedRecord(
  where: string,
  offset: number,
  problem: string,
  image: SessionImage | undefined,
  record: number,
): LogRecordCorruptError {
  const intact = intactThroughSeq(image, record);
  return new LogRecordCorruptError(
    `The ${where} is damaged (${problem}; the record starts at byte ${offset}); the records before it are intact (${describeIntact(intact)}). To keep them, ${DAMAGED_LINE_ADVICE}.`,
    where.replace(/^line \d+ of /, ''),
    record,
    offset,
    intact,
  );
}

/**
 * Replays a whole log from its bytes (no index): what `verify` and `repair` read.
 * @returns the image (every message and checkpoint read), the header's version, and where the
 *   complete lines end (the rest is a torn line)
 * @throws {LogRecordCorruptError} naming the first damaged record; {@link DocumentCorruptError} for
 *   a file that is not this session's log; {@link UnsupportedSchemaVersionError} for a newer format
 */
export function replayWhole(
  bytes: Buffer,
  path: string,
  sessionId: string,
): { image: SessionImage | undefined; version: number; offset: number; lines: number } {
  const end = bytes.indexOf(NEWLINE);
  if (end === -1) return { image: undefined, version: LOG_VERSION, offset: 0, lines: 0 };
  const version = checkHeader(bytes.toString('utf8', 0, end + 1), path, sessionId);
  const start = end + 1;
  const { image, used, lines } = replay(undefined, bytes.subarray(start), {
    path,
    start,
    firstLine: 2,
    sealed: version >= 3,
  });
  return { image, version, offset: start + used, lines: 1 + lines };
}

/** The bytes of the `messages` operations among `ops` (each spanning `spans[i]`; a span of a whole line counts whole). */
export function messageSpanBytes(ops: readonly { op?: unknown }[], spans: readonly { length: number }[]): number {
  let bytes = 0;
  ops.forEach((op, index) => {
    if (op?.op === 'messages') bytes += spans[index]?.length ?? 0;
  });
  return bytes;
}
