/**
 * What each `FileStore` write appends to a session log, decided from the session image under the
 * session lock: the store contract's checks (tenant, versions, seqs, existence) run here, before
 * anything is written, so a refused write stores nothing. Each function is pure: it returns the
 * operations of one log line and never changes the image.
 */
import type { Checkpoint, PendingWrite } from '../../../conversation/checkpoint.js';
import type { Message } from '../../../conversation/message.js';
import type { Branch, State } from '../../../conversation/session.js';
import { CheckpointCorruptError, ConcurrencyError, InvalidInputError, NotFoundError } from '../../../errors.js';
import type { TenantScope } from '../../store.js';
import { parseStoredCheckpoint, parseStoredPendingWrite } from '../../storedDocuments.js';
import { planAppend } from '../../storeRules.js';
import { assertTenantScope, inTenant } from '../../tenantScope.js';
import { mergePendingWrites } from '../v1/checkpointFiles.js';
import type { LogOp } from './logOps.js';
import {
  type BranchImage,
  type CheckpointRecord,
  findCheckpoint,
  firstOwnSeq,
  lastSeq,
  messageAt,
  recordDocument,
  type SessionImage,
} from './sessionImage.js';

/**
 * The image when the session exists in the scope's tenant.
 * @throws {InvalidIdError} for an unsafe tenant id in the scope; {@link NotFoundError} when the session does not exist (for this tenant)
 */
export function requireSession(image: SessionImage | undefined, sessionId: string, scope: TenantScope): SessionImage {
  assertTenantScope(scope);
  if (image === undefined || !inTenant(image.session, scope))
    throw new NotFoundError(`Session ${JSON.stringify(sessionId)} does not exist.`);
  return image;
}

/**
 * The branch of a session that exists in the scope's tenant.
 * @throws {NotFoundError} naming the session when it is missing (for this tenant), else the branch
 */
export function requireBranch(
  image: SessionImage | undefined,
  sessionId: string,
  branchId: string,
  scope: TenantScope,
): BranchImage {
  const branch = requireSession(image, sessionId, scope).branches.get(branchId);
  if (branch === undefined)
    throw new NotFoundError(
      `Branch ${JSON.stringify(branchId)} of session ${JSON.stringify(sessionId)} does not exist.`,
    );
  return branch;
}

/** The messages of a batch not stored yet (see `planAppend`), as a log operation, or none. Stored seqs the batch names must be read first ({@link storedSeqs}). */
export function appendOps(branch: BranchImage, messages: readonly Message[]): LogOp[] {
  if (messages.length === 0) return [];
  const first = firstOwnSeq(branch.branch);
  const fresh = planAppend(branch.branch.id, messages, {
    firstOwnSeq: first,
    lastSeq: lastSeq(branch),
    storedAt: (seq) => messageAt(branch, seq),
  });
  return fresh.length === 0 ? [] : [{ op: 'messages', branchId: branch.branch.id, messages: fresh }];
}

/** The seqs of `messages` the branch holds already (`undefined` when none): what {@link appendOps} compares. */
export function storedSeqs(
  branch: BranchImage,
  messages: readonly Message[],
): { fromSeq: number; throughSeq: number } | undefined {
  const end = lastSeq(branch);
  let fromSeq = Number.POSITIVE_INFINITY;
  let throughSeq = 0;
  for (const { seq } of messages) {
    if (seq > end) continue;
    fromSeq = Math.min(fromSeq, seq);
    throughSeq = Math.max(throughSeq, seq);
  }
  return throughSeq === 0 ? undefined : { fromSeq, throughSeq };
}

/** A checkpoint save as a log operation, or none when its id is stored already (idempotent). */
export function checkpointOps(branch: BranchImage, checkpoint: Checkpoint): LogOp[] {
  if (findCheckpoint(branch, checkpoint.id) !== undefined) return [];
  return [{ op: 'checkpoint', branchId: branch.branch.id, id: checkpoint.id, checkpoint }];
}

/** Names a stored checkpoint in errors. */
const named = (sessionId: string, branchId: string, id: string) =>
  `checkpoint ${JSON.stringify(id)} of session ${JSON.stringify(sessionId)} branch ${JSON.stringify(branchId)}`;

/**
 * A stored checkpoint with its appended pending writes, validated as strictly as it was written
 * (the record must be read first: `ImageLoader.checkpoints`).
 * @throws {CheckpointCorruptError} when the document or a pending write is damaged, or the
 *   document belongs to another session, branch or id
 */
export function loadRecord(record: CheckpointRecord, sessionId: string, branchId: string): Checkpoint {
  const name = named(sessionId, branchId, record.id);
  if (!record.loaded) throw new Error(`FileStore bug: ${name} was used before it was read.`);
  const checkpoint = parseStoredCheckpoint(recordDocument(record), name);
  if (checkpoint.id !== record.id || checkpoint.sessionId !== sessionId || checkpoint.branchId !== branchId) {
    throw new CheckpointCorruptError(
      `The stored ${name} holds checkpoint ${JSON.stringify(checkpoint.id)} of session ${JSON.stringify(checkpoint.sessionId)}, branch ${JSON.stringify(checkpoint.branchId)}; it was not loaded. Delete it.`,
    );
  }
  const appended = record.writes.map((write, index) =>
    parseStoredPendingWrite(write, `${index + 1} appended to ${name}`),
  );
  return { ...checkpoint, pendingWrites: mergePendingWrites(checkpoint.pendingWrites, appended) };
}

/** The writes of `writes` whose `toolCallId` the checkpoint does not hold yet, as a log operation, or none. */
export function pendingWriteOps(
  branch: BranchImage,
  sessionId: string,
  checkpointId: string,
  writes: readonly PendingWrite[],
): LogOp[] {
  const record = findCheckpoint(branch, checkpointId);
  if (record === undefined) throw new NotFoundError(`Checkpoint ${JSON.stringify(checkpointId)} does not exist.`);
  const stored = loadRecord(record, sessionId, branch.branch.id).pendingWrites;
  const fresh = mergePendingWrites(stored, writes).slice(stored.length);
  return fresh.length === 0 ? [] : [{ op: 'pendingWrites', branchId: branch.branch.id, checkpointId, writes: fresh }];
}

/**
 * A fork of `parent` at `atSeq` as a log operation.
 * @throws {ConcurrencyError} when the branch exists; {@link InvalidInputError} when `atSeq` is past the parent's last message
 */
export function forkOps(
  image: SessionImage,
  parent: BranchImage,
  branchId: string,
  atSeq: number,
  state: State,
): { ops: LogOp[]; branch: Branch } {
  if (image.branches.has(branchId)) throw new ConcurrencyError(`Branch ${JSON.stringify(branchId)} already exists.`);
  const end = lastSeq(parent);
  if (atSeq > end)
    throw new InvalidInputError(
      `Cannot fork at seq ${atSeq}: branch ${JSON.stringify(parent.branch.id)} has ${end} messages.`,
    );
  const branch: Branch = {
    id: branchId,
    sessionId: image.session.id,
    parent: { branchId: parent.branch.id, atSeq },
    createdAt: new Date().toISOString(),
    state,
    version: 1,
  };
  return { ops: [{ op: 'branch', branch }], branch };
}

/** Every branch of the image: `main` first, then by creation time. */
export function sortedBranches(image: SessionImage): Branch[] {
  const rank = (branch: Branch): number => (branch.parent === undefined ? 0 : 1);
  return [...image.branches.values()]
    .map((b) => b.branch)
    .sort((a, b) => rank(a) - rank(b) || a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
}
