/**
 * Checking a `FileStore` session log record by record, and salvaging it up to its first damaged
 * record. A check reads the whole file (not the index), so it finds damage a call served from the
 * index never reads. A repair keeps the intact records (rewritten as a new log, by rename) and
 * moves the damaged file aside under another name: it never deletes the original bytes.
 */
import { constants } from 'node:fs';
import { copyFile, link, open, readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { DocumentCorruptError, LogRecordCorruptError } from '../../../errors.js';
import { fsyncDir, hasErrorCode } from '../fileIo.js';
import { intactThroughSeq } from './logDamage.js';
import { replayWhole } from './logReplay.js';
import type { SessionImage } from './sessionImage.js';

/**
 * What `FileStore.verify` finds in a session's log.
 *
 * @example
 * ```ts
 * const report = await store.verify('chat-1');
 * if (!report.ok) console.error(report.damage?.message, report.intactThroughSeq);
 * ```
 */
export interface SessionLogReport {
  sessionId: string;
  /** The session log's path (a format 1 session has none yet: its folder). */
  file: string;
  /** The format version of the log's header (3 seals every record with a CRC-32C; 1 = a folder of documents). */
  version: number;
  /** Whether every complete record is intact (a torn last line a crash left does not count as damage). */
  ok: boolean;
  /** The file's size in bytes. */
  bytes: number;
  /** How many records (lines, the header included) are intact, from the start of the file. */
  intactRecords: number;
  /** Where the intact records end, in bytes from the start. */
  intactBytes: number;
  /** Per branch id, the last seq of the messages the intact records hold (what a repair keeps). */
  intactThroughSeq: Record<string, number>;
  /** Bytes after the last complete record when there is no damage: a write a crash cut off, ignored by reads and cut off by the next write. */
  tornBytes: number;
  /** The first damaged record, if any. */
  damage?: {
    /** Its line number (the header is 1). */
    record: number;
    /** The byte where it starts. */
    offset: number;
    /** The error calls that need it throw. */
    message: string;
    /** Complete lines after it: not applied (what follows a damaged record cannot be trusted to continue it), kept in the file a repair moves aside. */
    recordsAfter: number;
  };
}

/** What `FileStore.repair` did. */
export interface SessionLogRepair extends SessionLogReport {
  /** Whether the log was rewritten (only when it was damaged). */
  repaired: boolean;
  /** Where the damaged log was moved (a hard link, or a copy, of the original bytes), when repaired. */
  movedTo?: string;
}

const NEWLINE = 0x0a;

/**
 * Checks a session log record by record.
 * @returns the report, with the image of the intact records (every message and checkpoint read), or `undefined` when the file does not exist
 * @throws {UnsupportedSchemaVersionError} for a log of a newer format version
 */
export async function checkSessionLog(
  path: string,
  sessionId: string,
): Promise<{ report: SessionLogReport; image: SessionImage | undefined } | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) return undefined;
    throw error;
  }
  const base = { sessionId, file: path, bytes: bytes.length };
  try {
    const { image, version, offset, lines } = replayWhole(bytes, path, sessionId);
    const report = {
      ...base,
      version,
      ok: true,
      intactRecords: lines,
      intactBytes: offset,
      intactThroughSeq: intactThroughSeq(image, Number.POSITIVE_INFINITY),
      tornBytes: bytes.length - offset,
    };
    return { report, image };
  } catch (error) {
    if (!(error instanceof DocumentCorruptError)) throw error;
    const record = error instanceof LogRecordCorruptError ? error.record : 1;
    const offset = error instanceof LogRecordCorruptError ? Math.max(0, error.offset) : 0;
    let recordsAfter = 0;
    for (let at = bytes.indexOf(NEWLINE, offset); at !== -1; at = bytes.indexOf(NEWLINE, at + 1)) recordsAfter += 1;
    recordsAfter = Math.max(0, recordsAfter - 1); // the damaged record's own newline
    // The records before the damage, read again alone: they are what a repair keeps.
    const prefix = record < 2 ? undefined : replayWhole(bytes.subarray(0, offset), path, sessionId);
    const report: SessionLogReport = {
      ...base,
      version: prefix?.version ?? 0,
      ok: false,
      intactRecords: record - 1,
      intactBytes: offset,
      intactThroughSeq: intactThroughSeq(prefix?.image, Number.POSITIVE_INFINITY),
      tornBytes: 0,
      damage: { record, offset, message: error.message, recordsAfter },
    };
    return { report, image: prefix?.image };
  }
}

/**
 * Moves a damaged log aside without copying when it can: a hard link named
 * `log.damaged-<time>.jsonl` beside it (a copy where links are not supported), flushed.
 * @returns the new name
 */
export async function keepAside(path: string): Promise<string> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const aside = join(dirname(path), `${basename(path, '.jsonl')}.damaged-${stamp}.jsonl`);
  try {
    await link(path, aside);
  } catch (error) {
    if (hasErrorCode(error, 'EEXIST')) throw error;
    await copyFile(path, aside, constants.COPYFILE_EXCL);
    const handle = await open(aside, 'r+');
    await handle.sync().finally(() => handle.close());
  }
  await fsyncDir(dirname(path));
  return aside;
}
