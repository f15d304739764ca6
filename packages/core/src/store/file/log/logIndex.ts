/**
 * The index beside a `FileStore` session log (`sessions/<id>/log.index.json`): the session and
 * branch documents, the manifest of every checkpoint, and where in the log each message run,
 * checkpoint document and pending-writes operation is, as of a byte offset of the log (`through`).
 * Opening a session reads the index, then replays only the log lines after `through`, and reads
 * messages and checkpoints from the log by location when a call needs them.
 *
 * The log stays the one source of truth: the index is written (temp file and rename, without a
 * flush) only for a prefix of the log already flushed to disk, and it is used only when it matches
 * the log — the same header (a compacted log has a new log id), a log at least `through` bytes
 * long, and the same last 4 KiB before `through` (a hash). Anything else (no index, a damaged or
 * stale one, a crash between a log write and an index write) falls back to replaying the whole log,
 * so no crash can lose or duplicate anything the log holds.
 *
 * Version 2 keeps the CRC-32 of each message run's bytes: a run read back with the same checksum is
 * the run that was validated when it was written (or replayed), so it is used without validating
 * its messages again; a different checksum means the bytes changed on disk, and reading the run
 * throws `DocumentCorruptError`. Version 1 indexes (no checksums) are still read.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import type { Branch } from '../../../conversation/session.js';
import { parseStoredBranch, parseStoredSession } from '../../storedDocuments.js';
import { hasErrorCode } from '../fileIo.js';
import {
  type BranchImage,
  type CheckpointRecord,
  firstOwnSeq,
  type MessageRun,
  type OpLocation,
  type SessionImage,
} from './sessionImage.js';

/** The `format` of a log index. */
export const INDEX_FORMAT = 'baton-filestore-log-index';
/**
 * The version this code writes: 2 keeps each message run's CRC-32 ({@link OpLocation.crc}); version
 * 1 (no checksums) is still read, its runs then validated in full when read.
 */
const INDEX_VERSION = 2;
/** The bytes before `through` whose hash the index keeps. */
const TAIL_CHECK_BYTES = 4096;

const Location = z.union([
  z.tuple([z.number().int(), z.number().int(), z.number().int()]),
  z.tuple([z.number().int(), z.number().int(), z.number().int(), z.number().int()]),
]);
type LocationJson = z.infer<typeof Location>;

const IndexSchema = z.object({
  format: z.literal(INDEX_FORMAT),
  version: z.union([z.literal(1), z.literal(INDEX_VERSION)]),
  header: z.string(),
  through: z.number().int().positive(),
  lines: z.number().int().positive(),
  tail: z.string(),
  session: z.unknown(),
  branches: z.array(
    z.object({
      branch: z.unknown(),
      /** Per run: version 1 `[firstSeq, count, offset, length, line, op?]`; version 2 `[firstSeq, count, offset, length, line, op | null, crc | null]`. */
      // Checked run by run in readIndex (runsOf), not by zod: zod walks every element, and a new
      // process paid ~10 ms for it at 480 runs (opening a long session must not cost more than a short one).
      runs: z.custom<unknown[]>((value) => Array.isArray(value), 'runs must be an array'),
      checkpoints: z.array(
        z.object({
          id: z.string(),
          createdAt: z.string(),
          manifest: z
            .object({
              id: z.string(),
              parentId: z.string().nullable(),
              step: z.number(),
              throughSeq: z.number(),
              createdAt: z.string(),
            })
            .nullable(),
          at: Location,
          writes: z.array(Location),
        }),
      ),
    }),
  ),
});

const toJson = (at: OpLocation): LocationJson =>
  at.op === undefined ? [at.offset, at.length, at.line] : [at.offset, at.length, at.line, at.op];
function fromJson(json: readonly (number | null)[]): OpLocation {
  const [offset, length, line, op] = json;
  if (
    typeof offset !== 'number' ||
    typeof length !== 'number' ||
    typeof line !== 'number' ||
    op === null ||
    json.length > 4
  )
    throw new Error('not a location');
  return op === undefined ? { offset, length, line } : { offset, length, line, op };
}

/** A field of a run as stored: an integer, or `null` (no `op` or `crc`). */
const isField = (field: unknown): field is number | null => field === null || Number.isInteger(field);

/** A run's location built whole (one object, no property added after it is made). */
function location(offset: number, length: number, line: number, op?: number | null, crc?: number | null): OpLocation {
  if (op === null || op === undefined)
    return crc === null || crc === undefined ? { offset, length, line } : { offset, length, line, crc };
  return crc === null || crc === undefined ? { offset, length, line, op } : { offset, length, line, op, crc };
}

/**
 * The runs of a branch as an index stores them, checked one by one by hand: one loop over the
 * stored arrays, building each run's location directly (it runs once per open, in a new process
 * still cold, over every run of the branch). Runs follow each other from `firstSeq`, and every
 * location lies in the part of the log the index covers (`headerBytes..through`).
 * @throws {Error} when a run is malformed (the index is then not used)
 */
function runsOf(
  stored: readonly unknown[],
  version: 1 | 2,
  firstSeq: number,
  headerBytes: number,
  through: number,
): MessageRun[] {
  const runs: MessageRun[] = new Array(stored.length);
  let next = firstSeq;
  for (let i = 0; i < stored.length; i += 1) {
    const json = stored[i];
    if (!Array.isArray(json)) throw new Error('not a run');
    // Indexed reads, no `for…of` or destructuring: in this cold code each of those allocates an
    // iterator and a result object per field (about 0.6 KB a run, 0.3 MB for 480 runs).
    for (let f = 0; f < json.length; f += 1) if (!isField(json[f])) throw new Error('not a run');
    const fields = json as (number | null)[];
    if (version === 2 && fields.length !== 7) throw new Error('not a run');
    if (version === 1 && fields.length !== 5 && fields.length !== 6) throw new Error('not a run');
    const first = fields[0];
    const count = fields[1];
    const offset = fields[2];
    const length = fields[3];
    const line = fields[4];
    const op = fields[5];
    const crc = fields[6];
    if (first !== next || count === null || count! < 1 || offset === null || length === null || line === null)
      throw new Error('runs do not follow each other');
    if (offset! < headerBytes || length! <= 0 || offset! + length! > through) throw new Error('a run outside the log');
    if ((op === null || op === undefined) && version === 1 && fields.length === 6) throw new Error('not a run'); // version 1 leaves `op` out, never null
    if (crc !== null && crc !== undefined && (crc < 0 || crc > 0xffffffff)) throw new Error('not a CRC-32');
    next += count!;
    runs[i] = { firstSeq: first!, count: count!, at: location(offset!, length!, line!, op, crc), messages: undefined };
  }
  return runs;
}

/** A run's entry in a version 2 index: `[firstSeq, count, offset, length, line, op | null, crc | null]`. */
const runToJson = (run: { firstSeq: number; count: number }, at: OpLocation): (number | null)[] => [
  run.firstSeq,
  run.count,
  at.offset,
  at.length,
  at.line,
  at.op ?? null,
  at.crc ?? null,
];

/** The hash of the log bytes before `through` the index checks. */
async function tailCheck(handle: FileHandle, headerBytes: number, through: number): Promise<string> {
  const from = Math.max(headerBytes, through - TAIL_CHECK_BYTES);
  const bytes = Buffer.alloc(through - from);
  const { bytesRead } = await handle.read(bytes, 0, bytes.length, from);
  return createHash('sha1').update(bytes.subarray(0, bytesRead)).digest('hex');
}

/**
 * The image an index describes, when it matches the log open as `handle`.
 * @param header the log's header line, newline included
 * @param size the log's size in bytes
 * @returns `undefined` when there is no usable index (missing, damaged, or not of this log)
 */
export async function readIndex(
  indexPath: string,
  handle: FileHandle,
  sessionId: string,
  header: string,
  size: number,
): Promise<{ image: SessionImage; through: number; lines: number; bytes: number } | undefined> {
  let text: string;
  try {
    text = await readFile(indexPath, 'utf8');
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) return undefined;
    throw error;
  }
  try {
    const index = IndexSchema.parse(JSON.parse(text));
    const headerBytes = Buffer.byteLength(header);
    if (index.header !== header || index.through > size || index.through < headerBytes) return undefined;
    if ((await tailCheck(handle, headerBytes, index.through)) !== index.tail) return undefined;
    const session = parseStoredSession(index.session, `session in ${indexPath}`);
    if (session.id !== sessionId) return undefined;
    const inLog = (at: OpLocation) =>
      at.offset >= headerBytes && at.length > 0 && at.offset + at.length <= index.through;
    const branches = new Map<string, BranchImage>();
    for (const entry of index.branches) {
      const branch: Branch = parseStoredBranch(entry.branch, `branch in ${indexPath}`);
      if (branch.sessionId !== sessionId) return undefined;
      const runs = runsOf(entry.runs, index.version, firstOwnSeq(branch), headerBytes, index.through);
      const checkpoints = entry.checkpoints.map((c): CheckpointRecord => {
        const documentAt = fromJson(c.at);
        const writesAt = c.writes.map(fromJson);
        if (![documentAt, ...writesAt].every(inLog)) throw new Error('a checkpoint outside the log');
        return {
          id: c.id,
          createdAt: c.createdAt,
          manifest: c.manifest ?? undefined,
          loaded: false,
          document: undefined,
          writes: [],
          documentAt,
          writesAt,
        };
      });
      branches.set(branch.id, { branch, runs, checkpoints });
    }
    return { image: { session, branches }, through: index.through, lines: index.lines, bytes: Buffer.byteLength(text) };
  } catch {
    return undefined; // not usable: the log is replayed whole
  }
}

/**
 * Removes temp files an index write left when its process died between writing and renaming
 * (`.log.index.json.<uuid>.tmp`). Only the session's writer writes its index, under the session
 * lock, so any such file it finds is left over.
 */
async function removeStaleTemps(indexPath: string): Promise<void> {
  const prefix = `.${basename(indexPath)}.`;
  let names: string[];
  try {
    names = await readdir(dirname(indexPath));
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) return;
    throw error;
  }
  await Promise.all(
    names
      .filter((name) => name.startsWith(prefix) && name.endsWith('.tmp'))
      .map((name) => rm(join(dirname(indexPath), name), { force: true })),
  );
}

/**
 * Writes the index of `image` as of log offset `through` (the log open as `handle`; every message
 * run and checkpoint of the image must have a location). Not flushed: a lost or torn index is only
 * a slower open.
 * @returns the bytes written, or `undefined` when the image has parts outside the log (nothing is written)
 */
export async function writeIndex(
  indexPath: string,
  handle: FileHandle,
  image: SessionImage,
  log: { header: string; through: number; lines: number },
): Promise<number | undefined> {
  const branches = [];
  for (const { branch, runs, checkpoints } of image.branches.values()) {
    if (runs.some((run) => run.at === undefined) || checkpoints.some((c) => c.documentAt === undefined))
      return undefined;
    branches.push({
      branch,
      runs: runs.map((run) => runToJson(run, run.at!)),
      checkpoints: checkpoints.map((c) => ({
        id: c.id,
        createdAt: c.createdAt,
        manifest: c.manifest ?? null,
        at: toJson(c.documentAt!),
        writes: c.writesAt.map(toJson),
      })),
    });
  }
  const tail = await tailCheck(handle, Buffer.byteLength(log.header), log.through);
  const index = {
    format: INDEX_FORMAT,
    version: INDEX_VERSION,
    header: log.header,
    through: log.through,
    lines: log.lines,
    tail,
    session: image.session,
    branches,
  };
  await removeStaleTemps(indexPath);
  const temp = join(dirname(indexPath), `.${basename(indexPath)}.${randomUUID()}.tmp`);
  const text = JSON.stringify(index);
  try {
    await writeFile(temp, text);
    await rename(temp, indexPath);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  return Buffer.byteLength(text);
}
