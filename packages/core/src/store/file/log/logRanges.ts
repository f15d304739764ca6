/**
 * Ranged reads of a `FileStore` session log: the operations an image remembers by location
 * ({@link OpLocation}) — message runs, checkpoint documents, pending writes — read back with one
 * `pread` each and validated as strictly as a replay of their line (a message run whose bytes match
 * the checksum taken when they were validated is not validated again), so a long session answers a
 * call by reading only what it asks for.
 */
import { isAscii } from 'node:buffer';
import { type FileHandle, open } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { freezeMessages } from '../../cloneData.js';
import { hasErrorCode } from '../fileIo.js';
import { parseMessages } from './logApply.js';
import { corrupt, unparsable } from './logDamage.js';
import { LineSchema, LogOpSchema, type ParsedOp } from './logOps.js';
import { checkRecord } from './logRecord.js';
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
 * Reads the bytes at `locations` from `log` (one `pread` per group of nearby locations).
 * @throws {LogReplacedError} when the file is not the one the locations refer to
 */
async function readBytes(log: LogFile, locations: readonly OpLocation[]): Promise<Buffer[]> {
  let handle: FileHandle;
  try {
    handle = await open(log.path, 'r');
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) throw new LogReplacedError(log.path);
    throw error;
  }
  try {
    if ((await handle.stat({ bigint: true })).ino !== log.ino) throw new LogReplacedError(log.path);
    const out: Buffer[] = new Array(locations.length);
    for (const span of spans(locations)) {
      const bytes = Buffer.allocUnsafe(span.end - span.start);
      const { bytesRead } = await handle.read(bytes, 0, bytes.length, span.start);
      for (const index of span.members) {
        const at = locations[index]!;
        out[index] = bytes.subarray(at.offset - span.start, Math.min(bytesRead, at.offset - span.start + at.length));
      }
    }
    return out;
  } finally {
    await handle.close();
  }
}

/**
 * Reads the operations at `locations` from `log`.
 * @throws {LogReplacedError} when the file is not the one the locations refer to;
 *   {@link DocumentCorruptError} naming the line when the bytes there are not a log operation
 */
async function readOps(log: LogFile, locations: readonly OpLocation[]): Promise<ParsedOp[]> {
  const bytes = await readBytes(log, locations);
  return bytes.map((at, index) => parseOpAt(at, locations[index]!, log.path));
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
  if (at.op !== undefined) {
    // The whole line: its checksum, if it has one, is checked first.
    const seal = checkRecord(bytes, 0, bytes.length);
    if (seal.kind === 'mismatch')
      throw corrupt(where, '(root)', 'is damaged (its bytes no longer match their CRC-32C)', at.offset);
  }
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (cause) {
    throw unparsable(where, cause, at.offset);
  }
  if (at.op !== undefined) {
    const line = LineSchema.safeParse(value);
    if (!line.success) throw corrupt(where, '(root)', 'is not a session log line', at.offset);
    value = line.data.ops[at.op];
  }
  const parsed = LogOpSchema.safeParse(value);
  if (!parsed.success) throw corrupt(where, `ops.${at.op ?? 0}`, 'is not a session log operation', at.offset);
  return parsed.data;
}

/**
 * Reads the messages of `runs` still on disk (they belong to branch `branchId` of the image read
 * from `log`), deep-frozen; a run this process appended is parsed from the JSON it keeps
 * ({@link MessageRun.json}) instead. A run whose location has a checksum ({@link OpLocation.crc}) and whose
 * bytes still match it is taken as it was validated when written; any other run is validated in full.
 * @throws {DocumentCorruptError} naming the line when a run's bytes do not match its checksum, or
 *   a run is damaged or not what the image expects
 */
export async function loadRuns(log: LogFile, branchId: string, runs: readonly MessageRun[]): Promise<void> {
  for (const run of runs) if (run.messages === undefined && run.json !== undefined) parseWrittenRun(run, log.path);
  const missing = runs.filter((run) => run.messages === undefined && run.at !== undefined);
  if (missing.length === 0) return;
  const bytes = await readBytes(
    log,
    missing.map((run) => run.at!),
  );
  const parsed = missing.map((run, index) => {
    const at = run.at!;
    const where = `line ${at.line} of ${log.path}`;
    const expected = `messages ${run.firstSeq}–${run.firstSeq + run.count - 1} of branch ${JSON.stringify(branchId)}`;
    const checked = at.crc !== undefined;
    if (checked && crc32(bytes[index]!) !== at.crc) {
      throw corrupt(
        where,
        '(root)',
        `is damaged (its bytes no longer match the CRC-32 the log index took of ${expected} when they were written)`,
        at.offset,
      );
    }
    const op = checked ? trustedOp(bytes[index]!, at, where) : parseOpAt(bytes[index]!, at, log.path);
    if (
      op?.op !== 'messages' ||
      op.branchId !== branchId ||
      !Array.isArray(op.messages) ||
      op.messages.length !== run.count
    ) {
      throw corrupt(where, '(root)', `does not hold ${expected} where the log index says`, at.offset);
    }
    return freezeMessages(parseMessages(op.messages, run.firstSeq, where, !checked));
  });
  // Only once every run read is whole: a failed read leaves the image as it was.
  missing.forEach((run, index) => {
    run.messages = parsed[index];
  });
}

/**
 * The messages of a run this process appended, from the JSON it wrote ({@link MessageRun.json}):
 * validated then, so parsed without validation, as a run read back whose bytes match their checksum.
 */
function parseWrittenRun(run: MessageRun, path: string): void {
  const op = JSON.parse(run.json!) as { messages: unknown[] };
  run.messages = freezeMessages(parseMessages(op.messages, run.firstSeq, `line ${run.at?.line} of ${path}`, false));
  run.json = undefined;
}

/** The operation at `at`, whose bytes matched their checksum: parsed without schema validation (it was validated when written). */
function trustedOp(
  bytes: Buffer,
  at: OpLocation,
  where: string,
): { op?: unknown; branchId?: unknown; messages?: unknown } | undefined {
  let value: unknown;
  try {
    // ASCII bytes (the usual JSON of English text) decode as latin1 to the same string, without UTF-8 decoding.
    value = JSON.parse(bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8'));
  } catch (cause) {
    throw unparsable(where, cause, at.offset);
  }
  if (at.op !== undefined) value = (value as { ops?: unknown[] } | null)?.ops?.[at.op];
  return typeof value === 'object' && value !== null
    ? (value as { op?: unknown; branchId?: unknown; messages?: unknown })
    : undefined;
}

/**
 * Reads the documents and pending writes of `records` still on disk (checkpoints of branch `branchId`).
 * A damaged document is kept as it is (it throws `CheckpointCorruptError` when loaded); a location
 * that holds no checkpoint operation at all throws.
 * @throws {DocumentCorruptError} naming the line when the bytes there are not the operation expected
 */
export async function loadCheckpointRecords(
  log: LogFile,
  branchId: string,
  records: readonly CheckpointRecord[],
): Promise<void> {
  for (const record of records) {
    if (record.loaded || record.documentAt === undefined) continue;
    const [saved, ...appended] = await readOps(log, [record.documentAt, ...record.writesAt]);
    if (saved?.op !== 'checkpoint' || saved.branchId !== branchId || saved.id !== record.id) {
      throw corrupt(
        `line ${record.documentAt.line} of ${log.path}`,
        '(root)',
        `does not hold checkpoint ${JSON.stringify(record.id)} where the log index says`,
        record.documentAt.offset,
      );
    }
    const writes: unknown[] = [];
    appended.forEach((op, index) => {
      if (op.op !== 'pendingWrites' || op.checkpointId !== record.id) {
        throw corrupt(
          `line ${record.writesAt[index]!.line} of ${log.path}`,
          '(root)',
          `does not hold pending writes of checkpoint ${JSON.stringify(record.id)} where the log index says`,
          record.writesAt[index]!.offset,
        );
      }
      writes.push(...op.writes);
    });
    record.document = saved.checkpoint;
    record.writes = writes;
    record.loaded = true;
  }
}
