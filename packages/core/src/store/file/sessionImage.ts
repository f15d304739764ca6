/**
 * A `FileStore` session as its log describes it (format version 2): the session document, each
 * branch with its own messages and its checkpoints in save order. The log is a sequence of
 * operations ({@link LogOp}); {@link applyOps} replays them onto an image. Writers and readers
 * replay the same parsed operations, so a cached image equals what a fresh read of the file gives.
 */
import { z } from 'zod';
import type { CheckpointManifestEntry } from '../../conversation/checkpoint.js';
import type { Message } from '../../conversation/message.js';
import type { Branch, Session } from '../../conversation/session.js';
import { DocumentCorruptError } from '../../errors.js';
import { parseStoredBranch, parseStoredMessage, parseStoredSession } from '../storedDocuments.js';

/** One change recorded in a session log. A log line holds one or more, applied together. */
export type LogOp =
  | { op: 'session'; session: Session }
  | { op: 'branch'; branch: Branch }
  | { op: 'messages'; branchId: string; messages: Message[] }
  | { op: 'checkpoint'; branchId: string; id: string; checkpoint: unknown; savedAt?: string }
  | { op: 'pendingWrites'; branchId: string; checkpointId: string; writes: unknown[] }
  | { op: 'deleteCheckpoints'; branchId: string; ids: string[] }
  | { op: 'deleteBranches'; ids: string[] };

/** A stored checkpoint: its document as written (validated when loaded) and the pending writes appended to it. */
export interface CheckpointRecord {
  id: string;
  /** The document as stored; `loadCheckpoint` validates it, so a damaged one blocks only itself. */
  document: unknown;
  /** Its manifest fields; `undefined` when they cannot be read (the checkpoint is left out of the manifest). */
  manifest: CheckpointManifestEntry | undefined;
  /** `manifest.createdAt`, or when it cannot be read, when the checkpoint was saved (for retention by age). */
  createdAt: string;
  /** Pending writes appended after the save, as stored (validated when loaded). */
  writes: unknown[];
}

/** One branch of a session image. */
export interface BranchImage {
  branch: Branch;
  /** The branch's own messages; `messages[i].seq === firstOwnSeq + i`. */
  messages: Message[];
  /** In save order, oldest first. */
  checkpoints: CheckpointRecord[];
}

/** A session as its log describes it. */
export interface SessionImage {
  session: Session;
  /** By id, in creation order. */
  branches: Map<string, BranchImage>;
}

/** The first seq a branch owns: 1 for `main`, `atSeq + 1` for a fork. */
export const firstOwnSeq = (branch: Branch): number => (branch.parent === undefined ? 1 : branch.parent.atSeq + 1);

/** The last seq of a branch's history (its parent's `atSeq` when it owns no message yet). */
export const lastSeq = (image: BranchImage): number => image.messages.at(-1)?.seq ?? firstOwnSeq(image.branch) - 1;

const ManifestFields = z.object({
  id: z.string(),
  parentId: z.string().nullable(),
  sessionId: z.string(),
  branchId: z.string(),
  step: z.number().int().nonnegative(),
  throughSeq: z.number().int().nonnegative(),
  createdAt: z.string(),
});

/**
 * A checkpoint record from its stored document, reading only the manifest fields.
 * @param savedAt when its manifest fields cannot be read: the time retention by age counts from
 */
export function checkpointRecord(sessionId: string, branchId: string, id: string, document: unknown, savedAt: string): CheckpointRecord {
  const parsed = ManifestFields.safeParse(document);
  if (parsed.success && parsed.data.id === id && parsed.data.sessionId === sessionId && parsed.data.branchId === branchId) {
    const { parentId, step, throughSeq, createdAt } = parsed.data;
    return { id, document, manifest: { id, parentId, step, throughSeq, createdAt }, createdAt, writes: [] };
  }
  return { id, document, manifest: undefined, createdAt: savedAt, writes: [] };
}

const LogOpSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('session'), session: z.unknown() }),
  z.object({ op: z.literal('branch'), branch: z.unknown() }),
  z.object({ op: z.literal('messages'), branchId: z.string(), messages: z.array(z.unknown()) }),
  z.object({ op: z.literal('checkpoint'), branchId: z.string(), id: z.string(), checkpoint: z.unknown(), savedAt: z.string().optional() }),
  z.object({ op: z.literal('pendingWrites'), branchId: z.string(), checkpointId: z.string(), writes: z.array(z.unknown()) }),
  z.object({ op: z.literal('deleteCheckpoints'), branchId: z.string(), ids: z.array(z.string()) }),
  z.object({ op: z.literal('deleteBranches'), ids: z.array(z.string()) }),
]);

const LineSchema = z.object({ ops: z.array(z.unknown()) });

/**
 * Applies one log line's operations to `image` (created by the line's `session` operation when
 * `undefined`). Documents are validated as strictly as their writes (`strict`; a writer replaying
 * its own line, already validated, passes `false`).
 *
 * @param line the parsed JSON of the line
 * @param where names the line for errors (`'line 3 of <path>'`)
 * @param savedAt when the line was read, for checkpoints whose manifest fields cannot be read
 * @returns the image after the line
 * @throws {DocumentCorruptError} naming the line when it is not a log line, a document fails its
 *   schema, or it contradicts the log before it (a gap in seqs, an unknown branch)
 */
export function applyLine(image: SessionImage | undefined, line: unknown, where: string, strict: boolean, savedAt: string): SessionImage {
  const parsedLine = LineSchema.safeParse(line);
  if (!parsedLine.success) throw corrupt(where, '(root)', 'is not a session log line');
  let current = image;
  parsedLine.data.ops.forEach((raw, index) => {
    const parsed = LogOpSchema.safeParse(raw);
    if (!parsed.success) throw corrupt(where, `ops.${index}`, 'is not a session log operation');
    current = applyOp(current, parsed.data, `${where} (operation ${index + 1})`, strict, savedAt);
  });
  if (current === undefined) throw corrupt(where, '(root)', 'comes before the session document');
  return current;
}

function applyOp(image: SessionImage | undefined, op: z.infer<typeof LogOpSchema>, where: string, strict: boolean, savedAt: string): SessionImage {
  if (op.op === 'session') {
    const session = strict ? parseStoredSession(op.session, where) : (op.session as Session);
    if (image !== undefined && image.session.id !== session.id) throw corrupt(where, 'session.id', `names session ${JSON.stringify(session.id)}`);
    if (image === undefined) return { session, branches: new Map() };
    image.session = session;
    return image;
  }
  if (image === undefined) throw corrupt(where, 'op', 'comes before the session document');
  const sessionId = image.session.id;
  switch (op.op) {
    case 'branch': {
      const branch = strict ? parseStoredBranch(op.branch, where) : (op.branch as Branch);
      if (branch.sessionId !== sessionId) throw corrupt(where, 'branch.sessionId', `names session ${JSON.stringify(branch.sessionId)}`);
      const existing = image.branches.get(branch.id);
      if (existing === undefined) image.branches.set(branch.id, { branch, messages: [], checkpoints: [] });
      else existing.branch = branch;
      return image;
    }
    case 'messages': {
      const target = branchOf(image, op.branchId, where);
      op.messages.forEach((raw, index) => {
        const message = strict ? parseStoredMessage(raw, `${where}, message ${index + 1}`) : (raw as Message);
        if (message.seq !== lastSeq(target) + 1) throw corrupt(where, `messages.${index}.seq`, `is ${message.seq}, not the next seq ${lastSeq(target) + 1}`);
        target.messages.push(message);
      });
      return image;
    }
    case 'checkpoint': {
      const target = branchOf(image, op.branchId, where);
      if (!target.checkpoints.some((c) => c.id === op.id)) target.checkpoints.push(checkpointRecord(sessionId, op.branchId, op.id, op.checkpoint, op.savedAt ?? savedAt));
      return image;
    }
    case 'pendingWrites': {
      const record = branchOf(image, op.branchId, where).checkpoints.find((c) => c.id === op.checkpointId);
      if (record === undefined) throw corrupt(where, 'checkpointId', `names checkpoint ${JSON.stringify(op.checkpointId)}, which is not stored`);
      record.writes.push(...op.writes);
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

function branchOf(image: SessionImage, branchId: string, where: string): BranchImage {
  const branch = image.branches.get(branchId);
  if (branch === undefined) throw corrupt(where, 'branchId', `names branch ${JSON.stringify(branchId)}, which is not stored`);
  return branch;
}

function corrupt(where: string, field: string, problem: string): DocumentCorruptError {
  return new DocumentCorruptError(`The ${where} ${field === '(root)' ? '' : `at ${field} `}${problem}; restore the file from a backup.`, where, field);
}

/**
 * The operations that rebuild `image` (what compaction and the v1 migration write): the session,
 * then each branch with its messages and checkpoints with their pending writes, one line per
 * branch part so no line grows past a branch's history.
 */
export function snapshotLines(image: SessionImage): LogOp[][] {
  const lines: LogOp[][] = [[{ op: 'session', session: image.session }]];
  for (const { branch, messages, checkpoints } of image.branches.values()) {
    const ops: LogOp[] = [{ op: 'branch', branch }];
    if (messages.length > 0) ops.push({ op: 'messages', branchId: branch.id, messages });
    lines.push(ops);
    const saved: LogOp[] = [];
    for (const record of checkpoints) {
      const op: LogOp = { op: 'checkpoint', branchId: branch.id, id: record.id, checkpoint: record.document };
      if (record.manifest === undefined) op.savedAt = record.createdAt;
      saved.push(op);
      if (record.writes.length > 0) saved.push({ op: 'pendingWrites', branchId: branch.id, checkpointId: record.id, writes: record.writes });
    }
    if (saved.length > 0) lines.push(saved);
  }
  return lines;
}
