/**
 * The operations of a `FileStore` session log (format version 2): a line is `{"ops":[…]}`, one or
 * more {@link LogOp}s applied together (replayed onto a session image by `logApply.ts`). Lines are
 * written by {@link encodeLine}, which puts a long batch of messages in operations of at most
 * {@link MESSAGES_PER_OP} and reports where each operation's bytes are, so a later call can read one
 * operation without parsing its line.
 */
import { crc32 } from 'node:zlib';
import { z } from 'zod';
import type { Message } from '../../../conversation/message.js';
import type { Branch, Session } from '../../../conversation/session.js';
import { SEAL_BYTES, sealRecordBytes } from './logRecord.js';
import { type OpLocation, recordDocument, type SessionImage } from './sessionImage.js';

/** One change recorded in a session log. A log line holds one or more, applied together. */
export type LogOp =
  | { op: 'session'; session: Session }
  | { op: 'branch'; branch: Branch }
  | { op: 'messages'; branchId: string; messages: Message[] }
  | { op: 'checkpoint'; branchId: string; id: string; checkpoint: unknown; savedAt?: string }
  | { op: 'pendingWrites'; branchId: string; checkpointId: string; writes: unknown[] }
  | { op: 'deleteCheckpoints'; branchId: string; ids: string[] }
  | { op: 'deleteBranches'; ids: string[] };

/** The most messages one `messages` operation holds (a longer batch is several operations of one line). */
export const MESSAGES_PER_OP = 64;

/** The shape of one operation of a log line, checked on read (internal to FileStore's log). */
export const LogOpSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('session'), session: z.unknown() }),
  z.object({ op: z.literal('branch'), branch: z.unknown() }),
  z.object({ op: z.literal('messages'), branchId: z.string(), messages: z.array(z.unknown()) }),
  z.object({
    op: z.literal('checkpoint'),
    branchId: z.string(),
    id: z.string(),
    checkpoint: z.unknown(),
    savedAt: z.string().optional(),
  }),
  z.object({
    op: z.literal('pendingWrites'),
    branchId: z.string(),
    checkpointId: z.string(),
    writes: z.array(z.unknown()),
  }),
  z.object({ op: z.literal('deleteCheckpoints'), branchId: z.string(), ids: z.array(z.string()) }),
  z.object({ op: z.literal('deleteBranches'), ids: z.array(z.string()) }),
]);

/** A parsed operation. */
export type ParsedOp = z.infer<typeof LogOpSchema>;

/** The shape of a log line's body: its operations, each checked with {@link LogOpSchema}. */
export const LineSchema = z.object({ ops: z.array(z.unknown()) });

/** `{"ops":[` — every line written by {@link encodeLine} starts with it. */
const LINE_PREFIX = '{"ops":[';

/** `ops` with each `messages` operation longer than {@link MESSAGES_PER_OP} cut into several (applied in order, the same change). */
export function splitOps(ops: readonly LogOp[]): LogOp[] {
  const out: LogOp[] = [];
  for (const op of ops) {
    if (op.op !== 'messages' || op.messages.length <= MESSAGES_PER_OP) {
      out.push(op);
      continue;
    }
    for (let from = 0; from < op.messages.length; from += MESSAGES_PER_OP)
      out.push({ op: 'messages', branchId: op.branchId, messages: op.messages.slice(from, from + MESSAGES_PER_OP) });
  }
  return out;
}

/** A log line as written: its bytes, and each operation's bytes and JSON. */
export interface EncodedLine {
  /** The line's UTF-8 bytes, sealed with its checksum (see `logRecord.ts`), newline included. */
  bytes: Buffer;
  /** Where each operation's JSON is (byte offset and length, relative to the line's start). */
  spans: { offset: number; length: number }[];
  /** Each operation's JSON (`parts[i]` for `ops[i]`). */
  parts: string[];
}

/**
 * One log line of `ops`: the bytes of `sealRecord(JSON.stringify({ ops })) + '\n'` (see
 * `logRecord.ts`), built by encoding each operation's JSON once into the line's buffer and taking
 * the checksum over those bytes (no joined string, no second encoding).
 */
export function encodeLine(ops: readonly LogOp[]): EncodedLine {
  const parts: string[] = [];
  // The prefix, a comma between operations, `]`, the seal and the newline.
  let size = LINE_PREFIX.length + Math.max(ops.length - 1, 0) + 1 + SEAL_BYTES + 1;
  const lengths: number[] = [];
  for (const op of ops) {
    const part = JSON.stringify(op);
    const length = Buffer.byteLength(part);
    parts.push(part);
    lengths.push(length);
    size += length;
  }
  const bytes = Buffer.allocUnsafe(size);
  let at = bytes.write(LINE_PREFIX, 0, 'latin1');
  const spans: { offset: number; length: number }[] = [];
  for (let i = 0; i < parts.length; i += 1) {
    if (i > 0) bytes[at++] = 0x2c; // ,
    spans.push({ offset: at, length: lengths[i]! });
    at += bytes.write(parts[i]!, at, 'utf8');
  }
  bytes[at++] = 0x5d; // ]
  return { bytes: bytes.subarray(0, sealRecordBytes(bytes, at)), spans, parts };
}

/** Lines longer than this are re-serialized on read to find each operation's bytes (shorter ones are read whole when needed). */
const LOCATE_OPS_OVER_BYTES = 64 * 1024;

/**
 * Where each operation of a parsed line is: its own bytes when they can be told (a line of one
 * operation, or a long line written by {@link encodeLine}), else the whole line with the index.
 * @param text the line without its newline and without its seal (`{"ops":[…]`, see `logRecord.ts`),
 *   or an unsealed version 2 line without its closing `}`; `offset` its byte offset in the file,
 *   `line` its number
 */
export function locateOps(
  ops: readonly unknown[],
  text: string,
  offset: number,
  line: number,
  lineBytes: number,
): OpLocation[] {
  const bytes = Buffer.byteLength(text);
  const framed = text.startsWith(LINE_PREFIX) && text.endsWith(']');
  if (framed && ops.length === 1)
    return [{ offset: offset + LINE_PREFIX.length, length: bytes - LINE_PREFIX.length - 1, line }];
  if (framed && bytes > LOCATE_OPS_OVER_BYTES) {
    const { bytes: again, spans } = encodeLine(ops as LogOp[]);
    if (again.length === bytes + SEAL_BYTES + 1 && again.toString('utf8', 0, bytes) === text)
      return spans.map((span) => ({ offset: offset + span.offset, length: span.length, line }));
  }
  return ops.map((_, op) => ({ offset, length: lineBytes, line, op }));
}

/**
 * `locations` with the CRC-32 of each one's bytes ({@link OpLocation.crc}).
 * @param bytes the bytes the locations point into; `base` is the file offset of `bytes[0]`
 */
export function withChecksums(locations: readonly OpLocation[], bytes: Buffer, base: number): OpLocation[] {
  return locations.map((at) => {
    const crc = crc32(bytes.subarray(at.offset - base, at.offset - base + at.length));
    // Written out (not `{ ...at, crc }`: V8 copies a spread followed by more members slowly).
    return at.op === undefined
      ? { offset: at.offset, length: at.length, line: at.line, crc }
      : { offset: at.offset, length: at.length, line: at.line, op: at.op, crc };
  });
}

/**
 * The lines that rebuild `image` (what compaction and the version 1 migration write): the session,
 * then each branch, its messages (at most {@link MESSAGES_PER_OP} per line) and its checkpoints
 * with their pending writes, one operation per line, so any of them is read without the others.
 * Every message and checkpoint must be read (`loaded`) first.
 */
export function snapshotLines(image: SessionImage): LogOp[][] {
  const lines: LogOp[][] = [[{ op: 'session', session: image.session }]];
  for (const { branch, runs, checkpoints } of image.branches.values()) {
    lines.push([{ op: 'branch', branch }]);
    const messages = runs.flatMap((run) => {
      if (run.messages === undefined) throw new Error('FileStore bug: a snapshot of messages not read.');
      return run.messages;
    });
    for (const op of splitOps([{ op: 'messages', branchId: branch.id, messages }]))
      if (op.op === 'messages' && op.messages.length > 0) lines.push([op]);
    for (const record of checkpoints) {
      if (!record.loaded) throw new Error('FileStore bug: a snapshot of a checkpoint not read.');
      const op: LogOp = { op: 'checkpoint', branchId: branch.id, id: record.id, checkpoint: recordDocument(record) };
      if (record.manifest === undefined) op.savedAt = record.createdAt;
      lines.push([op]);
      if (record.writes.length > 0)
        lines.push([{ op: 'pendingWrites', branchId: branch.id, checkpointId: record.id, writes: record.writes }]);
    }
  }
  return lines;
}
