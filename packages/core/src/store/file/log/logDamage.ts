/**
 * The errors for a damaged line of a `FileStore` session log (they name the file, the line and
 * what the lines before it hold), and how much of each branch those lines hold.
 */
import { DocumentCorruptError, LogRecordCorruptError } from '../../../errors.js';
import { firstOwnSeq, type SessionImage } from './sessionImage.js';

/**
 * What to do about a damaged line of a session log (the end of every such error message). The
 * store never rewrites a log it cannot read: a compaction that meets the line is put off.
 */
export const DAMAGED_LINE_ADVICE =
  'salvage the records before it with FileStore.repair (`baton store repair --store file:<dir> --session <id>`, which moves the damaged log aside), or restore the file from a backup. Nothing in it was changed, and no other session is affected; until then, calls that need this line fail with this error';

/** The line number of a location like `'line 3 of <path>'` (errors name lines so). */
const lineOf = (where: string): number => Number(/^line (\d+) of /.exec(where)?.[1] ?? 0);

/** The path of a location like `'line 3 of <path> (operation 2)'`. */
const fileOf = (where: string): string => where.replace(/^line \d+ of /, '').replace(/ \(operation \d+\)$/, '');

/** The error for a log line that cannot be applied. */
export function corrupt(
  where: string,
  field: string,
  problem: string,
  offset = -1,
  intact?: Record<string, number>,
): DocumentCorruptError {
  const message = `The ${where} ${field === '(root)' ? '' : `at ${field} `}${problem}; ${DAMAGED_LINE_ADVICE}.`;
  const line = lineOf(where);
  if (line === 0) return new DocumentCorruptError(message, where, field);
  return new LogRecordCorruptError(message, fileOf(where), line, offset, intact, { field });
}

/** The error for a log line that is not JSON. */
export function unparsable(
  where: string,
  cause: unknown,
  offset = -1,
  intact?: Record<string, number>,
): DocumentCorruptError {
  const message = `The ${where} is damaged (${(cause as Error)?.message}); ${DAMAGED_LINE_ADVICE}.`;
  const line = lineOf(where);
  if (line === 0) return new DocumentCorruptError(message, where, '(root)', { cause });
  return new LogRecordCorruptError(message, fileOf(where), line, offset, intact, { cause });
}

/**
 * Per branch, the last seq the lines before line `record` hold (runs read from that line or later
 * left out, so a line applied halfway counts as not applied).
 */
export function intactThroughSeq(image: SessionImage | undefined, record: number): Record<string, number> {
  const out: Record<string, number> = {};
  if (image === undefined) return out;
  for (const branch of image.branches.values()) {
    let last = firstOwnSeq(branch.branch) - 1;
    for (const run of branch.runs) {
      if (run.at !== undefined && run.at.line >= record) break;
      last = run.firstSeq + run.count - 1;
    }
    out[branch.branch.id] = last;
  }
  return out;
}

/** `{"main":12,"alt":4}` as `main through seq 12, alt through seq 4` (or `no messages`). */
export function describeIntact(intact: Readonly<Record<string, number>>): string {
  const parts = Object.entries(intact).map(([branch, seq]) => `${JSON.stringify(branch)} through seq ${seq}`);
  return parts.length === 0 ? 'no session document' : parts.join(', ');
}
