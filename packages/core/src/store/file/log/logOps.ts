/**
 * The operations of a `FileStore` session log (format version 2) and how they are replayed onto a
 * {@link SessionImage}: a line is `{"ops":[…]}`, one or more {@link LogOp}s applied together.
 * Writers and readers replay the same parsed operations, so a cached image equals what a fresh read
 * of the file gives. Lines are written by {@link serializeLine}, which puts a long batch of messages
 * in operations of at most {@link MESSAGES_PER_OP} and reports where each operation's bytes are, so
 * a later call can read one operation without parsing its line.
 */
import { crc32 } from 'node:zlib';
import { z } from 'zod';
import type { Message } from '../../../conversation/message.js';
import type { Branch, Session } from '../../../conversation/session.js';
import { DocumentCorruptError, LogRecordCorruptError } from '../../../errors.js';
import { freezeMessages } from '../../cloneData.js';
import { parseStoredBranch, parseStoredMessage, parseStoredSession } from '../../storedDocuments.js';
import { SEAL_BYTES, sealRecord } from './logRecord.js';
import {
  type BranchImage,
  checkpointRecord,
  firstOwnSeq,
  lastSeq,
  type OpLocation,
  recordDocument,
  type SessionImage,
  writtenCheckpointRecord,
} from './sessionImage.js';

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

export const LineSchema = z.object({ ops: z.array(z.unknown()) });

/** `{"ops":[` — every line written by {@link serializeLine} starts with it. */
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

/**
 * One log line of `ops` (as `JSON.stringify({ ops })` writes it, sealed with its checksum: see
 * `logRecord.ts`), where each operation's JSON
 * is (byte offset and length, relative to the line's start), and that JSON itself (`parts[i]` for `ops[i]`).
 */
export function serializeLine(ops: readonly LogOp[]): {
  text: string;
  spans: { offset: number; length: number }[];
  parts: string[];
} {
  const parts = ops.map((op) => JSON.stringify(op));
  const spans: { offset: number; length: number }[] = [];
  let offset = LINE_PREFIX.length;
  for (const part of parts) {
    const length = Buffer.byteLength(part);
    spans.push({ offset, length });
    offset += length + 1;
  }
  return { text: `${sealRecord(`${LINE_PREFIX}${parts.join(',')}]}`)}\n`, spans, parts };
}

/** Lines longer than this are re-serialized on read to find each operation's bytes (shorter ones are read whole when needed). */
const LOCATE_OPS_OVER_BYTES = 64 * 1024;

/**
 * Where each operation of a parsed line is: its own bytes when they can be told (a line of one
 * operation, or a long line written by {@link serializeLine}), else the whole line with the index.
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
    const { text: again, spans } = serializeLine(ops as LogOp[]);
    if (again.length === text.length + SEAL_BYTES + 1 && again.startsWith(text))
      return spans.map((span) => ({ offset: offset + span.offset, length: span.length, line }));
  }
  return ops.map((_, op) => ({ offset, length: lineBytes, line, op }));
}

/**
 * `locations` with the CRC-32 of each one's bytes ({@link OpLocation.crc}).
 * @param bytes the bytes the locations point into; `base` is the file offset of `bytes[0]`
 */
export function withChecksums(locations: readonly OpLocation[], bytes: Buffer, base: number): OpLocation[] {
  return locations.map((at) => ({ ...at, crc: crc32(bytes.subarray(at.offset - base, at.offset - base + at.length)) }));
}

/**
 * Applies one log line's operations to `image` (created by the line's `session` operation when
 * `undefined`). Documents are validated as strictly as their writes (`strict`; a writer replaying
 * its own line, already validated, passes `false`).
 *
 * @param line the parsed JSON of the line
 * @param where names the line for errors (`'line 3 of <path>'`)
 * @param savedAt when the line was read, for checkpoints whose manifest fields cannot be read
 * @param locations where each operation is in the file (see {@link locateOps})
 * @returns the image after the line
 * @throws {DocumentCorruptError} naming the line when it is not a log line, a document fails its
 *   schema, or it contradicts the log before it (a gap in seqs, an unknown branch)
 */
export function applyLine(
  image: SessionImage | undefined,
  line: unknown,
  where: string,
  strict: boolean,
  savedAt: string,
  locations?: readonly OpLocation[],
): SessionImage {
  const parsedLine = LineSchema.safeParse(line);
  if (!parsedLine.success) throw corrupt(where, '(root)', 'is not a session log line');
  let current = image;
  parsedLine.data.ops.forEach((raw, index) => {
    const parsed = LogOpSchema.safeParse(raw);
    if (!parsed.success) throw corrupt(where, `ops.${index}`, 'is not a session log operation');
    current = applyOp(current, parsed.data, `${where} (operation ${index + 1})`, strict, savedAt, locations?.[index]);
  });
  if (current === undefined) throw corrupt(where, '(root)', 'comes before the session document');
  return current;
}

/**
 * Applies a line this process has just written to `image`, as {@link applyLine} applies it when read
 * back, without parsing the line again: each operation is its own JSON parsed (a copy sharing
 * nothing with the caller's objects), except a checkpoint's, whose manifest fields are taken from
 * the (validated) document and whose document is parsed only when a call needs it
 * ({@link recordDocument}). The operations are the store's own, so they are not checked again.
 *
 * @param ops the operations as written; `parts` their JSON (from {@link serializeLine})
 * @param where names the line for errors; `savedAt` as for {@link applyLine}
 * @param locations where each operation is in the file
 * @returns the image after the line
 * @throws {DocumentCorruptError} when the line contradicts the image (a bug of the caller)
 */
export function applyWritten(
  image: SessionImage | undefined,
  ops: readonly LogOp[],
  parts: readonly string[],
  where: string,
  savedAt: string,
  locations: readonly OpLocation[],
): SessionImage {
  let current = image;
  ops.forEach((op, index) => {
    const opWhere = `${where} (operation ${index + 1})`;
    const at = locations[index];
    if (op.op === 'checkpoint' && current !== undefined && at !== undefined) {
      const target = branchOf(current, op.branchId, opWhere);
      if (!target.checkpoints.some((c) => c.id === op.id)) {
        target.checkpoints.push(
          writtenCheckpointRecord(
            current.session.id,
            op.branchId,
            op.id,
            op.checkpoint,
            parts[index]!,
            op.savedAt ?? savedAt,
            at,
          ),
        );
      }
      return;
    }
    current = applyOp(current, JSON.parse(parts[index]!) as ParsedOp, opWhere, false, savedAt, at);
  });
  if (current === undefined) throw corrupt(where, '(root)', 'comes before the session document');
  return current;
}

function applyOp(
  image: SessionImage | undefined,
  op: ParsedOp,
  where: string,
  strict: boolean,
  savedAt: string,
  at: OpLocation | undefined,
): SessionImage {
  if (op.op === 'session') {
    const session = strict ? parseStoredSession(op.session, where) : (op.session as Session);
    if (image !== undefined && image.session.id !== session.id)
      throw corrupt(where, 'session.id', `names session ${JSON.stringify(session.id)}`);
    if (image === undefined) return { session, branches: new Map() };
    image.session = session;
    return image;
  }
  if (image === undefined) throw corrupt(where, 'op', 'comes before the session document');
  const sessionId = image.session.id;
  switch (op.op) {
    case 'branch': {
      const branch = strict ? parseStoredBranch(op.branch, where) : (op.branch as Branch);
      if (branch.sessionId !== sessionId)
        throw corrupt(where, 'branch.sessionId', `names session ${JSON.stringify(branch.sessionId)}`);
      const existing = image.branches.get(branch.id);
      if (existing === undefined) image.branches.set(branch.id, { branch, runs: [], checkpoints: [] });
      else existing.branch = branch;
      return image;
    }
    case 'messages': {
      const target = branchOf(image, op.branchId, where);
      const messages = parseMessages(op.messages, lastSeq(target) + 1, where, strict);
      if (messages.length > 0)
        target.runs.push({
          firstSeq: messages[0]!.seq,
          count: messages.length,
          at,
          messages: freezeMessages(messages),
        });
      return image;
    }
    case 'checkpoint': {
      const target = branchOf(image, op.branchId, where);
      if (!target.checkpoints.some((c) => c.id === op.id))
        target.checkpoints.push(
          checkpointRecord(sessionId, op.branchId, op.id, op.checkpoint, op.savedAt ?? savedAt, at),
        );
      return image;
    }
    case 'pendingWrites': {
      const record = branchOf(image, op.branchId, where).checkpoints.find((c) => c.id === op.checkpointId);
      if (record === undefined)
        throw corrupt(
          where,
          'checkpointId',
          `names checkpoint ${JSON.stringify(op.checkpointId)}, which is not stored`,
        );
      if (record.loaded) record.writes.push(...op.writes);
      if (at !== undefined) record.writesAt.push(at);
      return image;
    }
    case 'deleteCheckpoints': {
      const target = branchOf(image, op.branchId, where);
      const doomed = new Set(op.ids);
      target.checkpoints = target.checkpoints.filter((c) => !doomed.has(c.id));
      return image;
    }
    case 'deleteBranches': {
      for (const id of op.ids) image.branches.delete(id);
      return image;
    }
  }
}

/**
 * The messages of a `messages` operation, validated (when `strict`; else taken as they are) and
 * checked to continue the branch at `nextSeq`. Not frozen: callers that keep them freeze them.
 * @throws {DocumentCorruptError} naming the line and message
 */
export function parseMessages(raw: readonly unknown[], nextSeq: number, where: string, strict: boolean): Message[] {
  return raw.map((value, index) => {
    const message = strict ? parseStoredMessage(value, `${where}, message ${index + 1}`) : (value as Message);
    if (message?.seq !== nextSeq + index)
      throw corrupt(where, `messages.${index}.seq`, `is ${message?.seq}, not the next seq ${nextSeq + index}`);
    return message;
  });
}

function branchOf(image: SessionImage, branchId: string, where: string): BranchImage {
  const branch = image.branches.get(branchId);
  if (branch === undefined)
    throw corrupt(where, 'branchId', `names branch ${JSON.stringify(branchId)}, which is not stored`);
  return branch;
}

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
