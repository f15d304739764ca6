/**
 * JSON Lines files as `FileStore` format version 1 kept messages and pending writes (read for the
 * migration to the session log). A record counts once its line is complete (ends with `\n`); bytes
 * after the last newline are a torn line left by a crash mid-append, and reads ignore them.
 */
import { readFile } from 'node:fs/promises';
import { BatonError, DocumentCorruptError, StoreError } from '../../../errors.js';
import { hasErrorCode } from '../fileIo.js';

const NEWLINE = 0x0a;

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
    throw new DocumentCorruptError(
      `The ${where} of ${path} is damaged (${(cause as Error).message}); restore the file from a backup.`,
      `${where} of ${path}`,
      '(root)',
      { cause },
    );
  }
  try {
    return parse(value, `${where} of ${path}`);
  } catch (cause) {
    if (cause instanceof BatonError) throw cause;
    throw new StoreError(
      `The ${where} of ${path} is damaged (${(cause as Error)?.message}); restore the file from a backup.`,
      { cause },
    );
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
