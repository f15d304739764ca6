/**
 * Ranged reads of a `FileStore` session log: the operations an image remembers by location
 * ({@link OpLocation}) — message runs, checkpoint documents, pending writes — read back with one
 * `pread` each and validated as strictly as a replay of their line, so a long session answers a
 * call by reading only what it asks for.
 */
import { type FileHandle, open } from 'node:fs/promises';
import { hasErrorCode } from '../fileIo.js';
import { corrupt, LineSchema, LogOpSchema, type ParsedOp, parseMessages, unparsable } from './logOps.js';
import type { CheckpointRecord, MessageRun, OpLocation } from './sessionImage.js';

/** The log file was replaced (compacted, or its session deleted) since the image was read: read the image again. */
export class LogReplacedError extends Error {}

/** What the reads need of the log an image was read from. */
export interface LogFile {
  path: string;
  /** The inode the image's locations refer to. */
  ino: bigint;
}

/**
 * Reads the operations at `locations` from `log`.
 * @throws {LogReplacedError} when the file is not the one the locations refer to;
 *   {@link DocumentCorruptError} naming the line when the bytes there are not a log operation
 */
async function readOps(log: LogFile, locations: readonly OpLocation[]): Promise<ParsedOp[]> {
  let handle: FileHandle;
  try {
    handle = await open(log.path, 'r');
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) throw new LogReplacedError(log.path);
    throw error;
  }
  try {
    if ((await handle.stat({ bigint: true })).ino !== log.ino) throw new LogReplacedError(log.path);
    const ops: ParsedOp[] = new Array(locations.length);
    for (const span of spans(locations)) {
      const bytes = Buffer.alloc(span.end - span.start);
      const { bytesRead } = await handle.read(bytes, 0, bytes.length, span.start);
      for (const index of span.members) {
        const at = locations[index]!;
        ops[index] = parseOpAt(bytes.subarray(at.offset - span.start, Math.min(bytesRead, at.offset - span.start + at.length)), at, log.path);
      }
    }
    return ops;
  } finally {
    await handle.close();
  }
}

/** Locations closer than this are read with one `pread` (the bytes between them read and dropped). */
const MAX_GAP_BYTES = 64 * 1024;

/** The byte spans to read for `locations`: nearby ones merged, each with the indexes of the locations it holds. */
function spans(locations: readonly OpLocation[]): { start: number; end: number; members: number[] }[] {
  const order = locations.map((_, index) => index).sort((a, b) => locations[a]!.offset - locations[b]!.offset);
  const out: { start: number; end: number; members: number[] }[] = [];
  for (const index of order) {
    const at = locations[index]!;
    const last = out.at(-1);
    if (last !== undefined && at.offset - last.end <= MAX_GAP_BYTES) {
      last.end = Math.max(last.end, at.offset + at.length);
      last.members.push(index);
    } else out.push({ start: at.offset, end: at.offset + at.length, members: [index] });
  }
  return out;
}

function parseOpAt(bytes: Buffer, at: OpLocation, path: string): ParsedOp {
  const where = `line ${at.line} of ${path}`;
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (cause) {
    throw unparsable(where, cause);
  }
  if (at.op !== undefined) {
    const line = LineSchema.safeParse(value);
    if (!line.success) throw corrupt(where, '(root)', 'is not a session log line');
    value = line.data.ops[at.op];
  }
  const parsed = LogOpSchema.safeParse(value);
  if (!parsed.success) throw corrupt(where, `ops.${at.op ?? 0}`, 'is not a session log operation');
  return parsed.data;
}

/**
 * Reads the messages of `runs` still on disk (they belong to branch `branchId` of the image read from `log`).
 * @throws {DocumentCorruptError} naming the line when a run is damaged or not what the image expects
 */
export async function loadRuns(log: LogFile, branchId: string, runs: readonly MessageRun[]): Promise<void> {
  const missing = runs.filter((run) => run.messages === undefined && run.at !== undefined);
  if (missing.length === 0) return;
  const ops = await readOps(
    log,
    missing.map((run) => run.at!),
  );
  ops.forEach((op, index) => {
    const run = missing[index]!;
    const where = `line ${run.at!.line} of ${log.path}`;
    if (op.op !== 'messages' || op.branchId !== branchId || op.messages.length !== run.count) {
      throw corrupt(where, '(root)', `does not hold messages ${run.firstSeq}–${run.firstSeq + run.count - 1} of branch ${JSON.stringify(branchId)} where the log index says`);
    }
    run.messages = parseMessages(op.messages, run.firstSeq, where, true);
  });
}

/**
 * Reads the documents and pending writes of `records` still on disk (checkpoints of branch `branchId`).
 * A damaged document is kept as it is (it throws `CheckpointCorruptError` when loaded); a location
 * that holds no checkpoint operation at all throws.
 * @throws {DocumentCorruptError} naming the line when the bytes there are not the operation expected
 */
export async function loadCheckpointRecords(log: LogFile, branchId: string, records: readonly CheckpointRecord[]): Promise<void> {
  for (const record of records) {
    if (record.loaded || record.documentAt === undefined) continue;
    const [saved, ...appended] = await readOps(log, [record.documentAt, ...record.writesAt]);
    if (saved?.op !== 'checkpoint' || saved.branchId !== branchId || saved.id !== record.id) {
      throw corrupt(`line ${record.documentAt.line} of ${log.path}`, '(root)', `does not hold checkpoint ${JSON.stringify(record.id)} where the log index says`);
    }
    const writes: unknown[] = [];
    appended.forEach((op, index) => {
      if (op.op !== 'pendingWrites' || op.checkpointId !== record.id) {
        throw corrupt(`line ${record.writesAt[index]!.line} of ${log.path}`, '(root)', `does not hold pending writes of checkpoint ${JSON.stringify(record.id)} where the log index says`);
      }
      writes.push(...op.writes);
    });
    record.document = saved.checkpoint;
    record.writes = writes;
    record.loaded = true;
  }
}
