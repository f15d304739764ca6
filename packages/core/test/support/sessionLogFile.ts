import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sealRecord } from '../../src/store/file/log/logRecord.js';

/** One operation of a session log line, as JSON (see `src/store/file/log/logOps.ts`). */
export type LogOpJson = { op: string } & Record<string, unknown>;

/** Seals a log line (`JSON.stringify` of `{ ops }`) with its CRC-32C, as the store writes it (format 3). */
export { sealRecord as sealLogRecord };

/** `<directory>/sessions/<sessionId>/log.jsonl`. */
export const logFileOf = (directory: string, sessionId: string): string =>
  join(directory, 'sessions', sessionId, 'log.jsonl');

/**
 * Rewrites a FileStore session log by hand, as a disk fault or an editor could: `edit` gets every
 * operation of every line (after the header), in order, and changes them in place. The file is
 * replaced by rename, as the store replaces a log, so a store that cached the session reads it again.
 * Each line is sealed again with its checksum (as a writer that knows the format would), so what
 * the reader meets is the edited operations, not a checksum failure.
 */
export async function editSessionLog(
  directory: string,
  sessionId: string,
  edit: (ops: LogOpJson[]) => void,
): Promise<string> {
  const file = logFileOf(directory, sessionId);
  const [header, ...lines] = (await readFile(file, 'utf8')).trimEnd().split('\n');
  const records = lines.map((line) => JSON.parse(line) as { ops: LogOpJson[] });
  edit(records.flatMap((record) => record.ops));
  await writeFile(
    `${file}.edited`,
    `${[header, ...records.map((record) => sealRecord(JSON.stringify({ ops: record.ops })))].join('\n')}\n`,
  );
  await rename(`${file}.edited`, file);
  return file;
}
