/**
 * Append-only JSON Lines files, as `FileStore` keeps messages and pending writes. A record counts
 * once its line is complete (ends with `\n`). Bytes after the last newline are a torn line left by a
 * crash mid-append: reads ignore them and the next append (under the session lock) cuts them off.
 */
import { type FileHandle, open, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { BatonError, DocumentCorruptError, StoreError } from '../../errors.js';
import { fsyncDir, hasErrorCode } from './fileIo.js';

const NEWLINE = 0x0a;
const TAIL_CHUNK = 8 * 1024;
const MAX_TAIL_CHUNK = 1024 * 1024;

/** A JSON Lines file as read: its complete records, and how many of its bytes they take. */
export interface JsonLinesContent<T> {
  records: T[];
  /** Bytes up to and including the last newline; the rest of the file (if any) is a torn line. */
  validBytes: number;
  /** The file's size when read. */
  size: number;
}

/** Validates one parsed record; `document` names it (`'line 3 of <path>'`) for the error it throws. */
export type ParseRecord<T> = (value: unknown, document: string) => T;

/**
 * Parses one complete line.
 * @param parse validates the parsed JSON (throw a Baton error naming `document` to reject it)
 * @throws {DocumentCorruptError} naming the file and line when it is not valid JSON; what `parse`
 *   throws (any other error is wrapped as a {@link StoreError} naming the line)
 */
function parseLine<T>(path: string, line: string, where: string, parse: ParseRecord<T>): T {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (cause) {
    throw new DocumentCorruptError(`The ${where} of ${path} is damaged (${(cause as Error).message}); restore the file from a backup.`, `${where} of ${path}`, '(root)', { cause });
  }
  try {
    return parse(value, `${where} of ${path}`);
  } catch (cause) {
    if (cause instanceof BatonError) throw cause;
    throw new StoreError(`The ${where} of ${path} is damaged (${(cause as Error)?.message}); restore the file from a backup.`, { cause });
  }
}

/**
 * Reads every complete record of a JSON Lines file; a torn last line is ignored.
 * @returns the records (empty when the file does not exist)
 * @throws {StoreError} when a complete line is damaged
 */
export async function readJsonLines<T>(path: string, parse: ParseRecord<T>): Promise<JsonLinesContent<T>> {
  let buffer: Buffer;
  try {
    buffer = await readFile(path);
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) return { records: [], validBytes: 0, size: 0 };
    throw error;
  }
  const validBytes = buffer.lastIndexOf(NEWLINE) + 1;
  const records: T[] = [];
  if (validBytes > 0) {
    const lines = buffer.toString('utf8', 0, validBytes - 1).split('\n');
    lines.forEach((line, index) => {
      records.push(parseLine(path, line, `line ${index + 1}`, parse));
    });
  }
  return { records, validBytes, size: buffer.length };
}

/**
 * Reads complete lines from the end of an open file, backwards in growing chunks, until `enough`
 * says the lines (in file order, the last ones of the file) suffice or the start of the file is reached.
 */
async function readTailLines(handle: FileHandle, size: number, enough: (lines: string[]) => boolean): Promise<{ lines: string[]; validBytes: number }> {
  let position = size;
  let tail = Buffer.alloc(0);
  let chunkSize = TAIL_CHUNK;
  for (;;) {
    const length = Math.min(chunkSize, position);
    chunkSize = Math.min(chunkSize * 4, MAX_TAIL_CHUNK);
    position -= length;
    const chunk = Buffer.alloc(length);
    await handle.read(chunk, 0, length, position);
    tail = Buffer.concat([chunk, tail]);
    const lastNewline = tail.lastIndexOf(NEWLINE);
    if (lastNewline === -1 && position > 0) continue;
    const validBytes = lastNewline === -1 ? 0 : position + lastNewline + 1;
    const firstStart = position === 0 ? 0 : tail.indexOf(NEWLINE) + 1;
    const lines = lastNewline === -1 || firstStart > lastNewline ? [] : tail.toString('utf8', firstStart, lastNewline).split('\n');
    const done = enough(lines);
    if (done || position === 0) return { lines, validBytes };
  }
}

/**
 * Appends records to a JSON Lines file, flushed with fsync. The caller must hold the lock that
 * guards the file. A torn last line is cut off first.
 *
 * @param path the file (created when missing)
 * @param parse validates a stored record
 * @param reachesBack how far back `plan` needs to see: the last records of the file are read,
 *   newest first, until one satisfies it (`undefined`: none are read)
 * @param plan given those last records (in file order), returns the new records to write (may be empty)
 * @returns how many records were written
 * @throws {StoreError} when a complete line of the tail is damaged
 */
export async function appendJsonLines<T>(
  path: string,
  parse: ParseRecord<T>,
  reachesBack: ((record: T) => boolean) | undefined,
  plan: (tail: T[]) => unknown[],
): Promise<number> {
  const handle = await open(path, 'a+');
  try {
    const { size } = await handle.stat();
    const tail: T[] = [];
    let validBytes = 0;
    if (size > 0) {
      let satisfied = reachesBack === undefined;
      const read = await readTailLines(handle, size, (lines) => {
        if (satisfied) return true;
        // Parse from the newest line back; keep what was parsed for the next, longer read too.
        tail.length = 0;
        for (let index = lines.length - 1; index >= 0 && !satisfied; index -= 1) {
          const record = parseLine(path, lines[index]!, `line ${lines.length - index} from the end`, parse);
          tail.unshift(record);
          satisfied = reachesBack!(record);
        }
        return satisfied;
      });
      validBytes = read.validBytes;
    }
    const fresh = plan(tail);
    if (fresh.length === 0) return 0;
    if (validBytes < size) await handle.truncate(validBytes);
    await handle.write(`${fresh.map((record) => JSON.stringify(record)).join('\n')}\n`);
    await handle.datasync();
    if (size === 0) await fsyncDir(dirname(path));
    return fresh.length;
  } finally {
    await handle.close();
  }
}

/**
 * The last complete record of a JSON Lines file, read from its end (a torn last line is ignored).
 * @returns `undefined` when the file is missing or holds no complete record
 * @throws {StoreError} when that line is damaged
 */
export async function readLastJsonLine<T>(path: string, parse: ParseRecord<T>): Promise<T | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) return undefined;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    if (size === 0) return undefined;
    const { lines } = await readTailLines(handle, size, (found) => found.length > 0);
    const last = lines.at(-1);
    return last === undefined ? undefined : parseLine(path, last, 'last line', parse);
  } finally {
    await handle.close();
  }
}
