/**
 * How the operations of a `FileStore` session log (`logOps.ts`) are replayed onto a
 * {@link SessionImage}. Writers and readers replay the same parsed operations, so a cached image
 * equals what a fresh read of the file gives.
 */
import type { Message } from '../../../conversation/message.js';
import type { Branch, Session } from '../../../conversation/session.js';
import { freezeMessages } from '../../cloneData.js';
import { parseStoredBranch, parseStoredMessage, parseStoredSession } from '../../storedDocuments.js';
import { corrupt } from './logDamage.js';
import { LineSchema, type LogOp, LogOpSchema, type ParsedOp } from './logOps.js';
import {
  type BranchImage,
  checkpointRecord,
  findCheckpoint,
  lastSeq,
  type OpLocation,
  type SessionImage,
  writtenCheckpointRecord,
} from './sessionImage.js';

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
 * nothing with the caller's objects), except a checkpoint's and a message run's. A checkpoint's
 * manifest fields are taken from the (validated) document and its document is parsed only when a
 * call needs it ({@link recordDocument}); a run's messages are parsed from their JSON only when a
 * call reads them (`loadRuns`), so a turn that reads nothing back parses none of its messages. The
 * operations are the store's own, so they are not checked again.
 *
 * @param ops the operations as written; `parts` their JSON (from `encodeLine`)
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
  for (let index = 0; index < ops.length; index += 1) {
    const op = ops[index]!;
    const opWhere = `${where} (operation ${index + 1})`;
    const at = locations[index];
    if (op.op === 'checkpoint' && current !== undefined && at !== undefined) {
      const target = branchOf(current, op.branchId, opWhere);
      if (findCheckpoint(target, op.id) === undefined) {
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
      continue;
    }
    if (op.op === 'messages' && current !== undefined && at !== undefined) {
      const target = branchOf(current, op.branchId, opWhere);
      // The seqs checked as a replay checks them; the messages stay in their JSON until read.
      checkSeqs(op.messages, lastSeq(target) + 1, opWhere);
      if (op.messages.length > 0)
        target.runs.push({
          firstSeq: op.messages[0]!.seq,
          count: op.messages.length,
          at,
          messages: undefined,
          json: parts[index]!,
        });
      continue;
    }
    current = applyOp(current, JSON.parse(parts[index]!) as ParsedOp, opWhere, false, savedAt, at);
  }
  if (current === undefined) throw corrupt(where, '(root)', 'comes before the session document');
  return current;
}

/**
 * Applies the operations of a snapshot line (`snapshotLines`, built from a validated image) to
 * `image`, as {@link applyLine} applies them without `strict`, but without checking their shapes
 * again: they are the store's own, and the image keeps sharing their documents as it would then.
 *
 * @param where names the line for errors; `savedAt` and `locations` as for {@link applyLine}
 * @returns the image after the line
 * @throws {DocumentCorruptError} when the line contradicts the image (a bug of the caller)
 */
export function applySnapshotLine(
  image: SessionImage | undefined,
  ops: readonly LogOp[],
  where: string,
  savedAt: string,
  locations: readonly OpLocation[],
): SessionImage {
  let current = image;
  for (let index = 0; index < ops.length; index += 1)
    current = applyOp(
      current,
      ops[index] as ParsedOp,
      `${where} (operation ${index + 1})`,
      false,
      savedAt,
      locations[index],
    );
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
      if (findCheckpoint(target, op.id) === undefined)
        target.checkpoints.push(
          checkpointRecord(sessionId, op.branchId, op.id, op.checkpoint, op.savedAt ?? savedAt, at),
        );
      return image;
    }
    case 'pendingWrites': {
      const record = findCheckpoint(branchOf(image, op.branchId, where), op.checkpointId);
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
    if (message?.seq !== nextSeq + index) throw notNextSeq(where, index, message?.seq, nextSeq);
    return message;
  });
}

/**
 * Checks that validated `messages` continue a branch at `nextSeq`, as {@link parseMessages} checks a
 * line's messages, without copying them.
 * @throws {DocumentCorruptError} naming the line and message
 */
function checkSeqs(messages: readonly Message[], nextSeq: number, where: string): void {
  for (let index = 0; index < messages.length; index += 1) {
    const seq = messages[index]!.seq;
    if (seq !== nextSeq + index) throw notNextSeq(where, index, seq, nextSeq);
  }
}

/** The error of a line's message `index` whose `seq` does not continue the branch at `nextSeq`. */
function notNextSeq(where: string, index: number, seq: unknown, nextSeq: number) {
  return corrupt(where, `messages.${index}.seq`, `is ${seq}, not the next seq ${nextSeq + index}`);
}

function branchOf(image: SessionImage, branchId: string, where: string): BranchImage {
  const branch = image.branches.get(branchId);
  if (branch === undefined)
    throw corrupt(where, 'branchId', `names branch ${JSON.stringify(branchId)}, which is not stored`);
  return branch;
}
