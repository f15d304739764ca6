/**
 * `FileStore`'s checkpoint calls. A checkpoint's manifest is kept in the session image; its
 * document and pending writes are read from the log only when a call loads or extends it.
 */
import type { Checkpoint, CheckpointManifestEntry, PendingWrite } from '../../../conversation/checkpoint.js';
import type { Session } from '../../../conversation/session.js';
import { CheckpointCorruptError, NotFoundError } from '../../../errors.js';
import { assertValidId } from '../../../ids.js';
import { cloneData } from '../../cloneData.js';
import type { CheckpointRetention, TenantScope } from '../../store.js';
import {
  assertBranchId,
  assertCheckpoint,
  assertPendingWrites,
  checkpointsToPrune,
  ensureCheckpointDeletable,
} from '../../storeRules.js';
import type { FileSessions } from '../fileSessions.js';
import type { LogOp } from '../log/logOps.js';
import { checkpointOps, loadRecord, pendingWriteOps, requireBranch } from '../log/logPlans.js';
import type { CheckpointRecord } from '../log/sessionImage.js';

/** `FileStore.saveCheckpoint` (idempotent per id). */
export async function saveCheckpoint(
  sessions: FileSessions,
  checkpoint: Checkpoint,
  scope: TenantScope,
): Promise<void> {
  const valid = assertCheckpoint(checkpoint);
  await sessions.write(
    valid.sessionId,
    scope,
    (image) => checkpointOps(requireBranch(image, valid.sessionId, valid.branchId, scope), valid),
    () => undefined,
  );
}

/** `FileStore.putPendingWrites`: the writes the checkpoint does not hold yet, appended to it. */
export async function putPendingWrites(
  sessions: FileSessions,
  sessionId: string,
  branchId: string,
  checkpointId: string,
  writes: readonly PendingWrite[],
  scope: TenantScope,
): Promise<void> {
  assertBranchId(branchId);
  assertValidId('checkpoint', checkpointId);
  const valid = assertPendingWrites(writes);
  await sessions.write(
    sessionId,
    scope,
    async (image, load) => {
      const branch = requireBranch(image, sessionId, branchId, scope);
      await load.checkpoints(
        branch,
        branch.checkpoints.filter((c) => c.id === checkpointId),
      );
      return pendingWriteOps(branch, sessionId, checkpointId, valid);
    },
    () => undefined,
  );
}

/** `FileStore.loadCheckpoint`: the newest, or the one with `id`; only its document and pending writes are read. */
export async function loadCheckpoint(
  sessions: FileSessions,
  sessionId: string,
  branchId: string,
  id: string | undefined,
  scope: TenantScope,
): Promise<Checkpoint | undefined> {
  assertBranchId(branchId);
  if (id !== undefined) assertValidId('checkpoint', id);
  return sessions.view(sessionId, async (image, load) => {
    const branch = requireBranch(image, sessionId, branchId, scope);
    const record = id === undefined ? branch.checkpoints.at(-1) : branch.checkpoints.find((c) => c.id === id);
    if (record === undefined) return undefined;
    await load.checkpoints(branch, [record]);
    return cloneData(loadRecord(record, sessionId, branchId));
  });
}

/** `FileStore.listCheckpoints`: the manifest, oldest first (a checkpoint whose manifest fields cannot be read is left out). */
export async function listCheckpoints(
  sessions: FileSessions,
  sessionId: string,
  branchId: string,
  scope: TenantScope,
): Promise<CheckpointManifestEntry[]> {
  assertBranchId(branchId);
  return sessions.view(sessionId, async (image) => {
    const branch = requireBranch(image, sessionId, branchId, scope);
    return branch.checkpoints.flatMap((c) => (c.manifest === undefined ? [] : [{ ...c.manifest }]));
  });
}

/**
 * `FileStore.pruneCheckpoints`: one line flushed like every other write, so a pruned checkpoint
 * never comes back after a crash (the runtime prunes once every N checkpoints, so the flush is rare).
 */
export async function pruneCheckpoints(
  sessions: FileSessions,
  sessionId: string,
  branchId: string,
  retention: CheckpointRetention,
  scope: TenantScope,
): Promise<number> {
  assertBranchId(branchId);
  let pruned = 0;
  await sessions.write(
    sessionId,
    scope,
    (image) => {
      const ids = checkpointsToPrune(requireBranch(image, sessionId, branchId, scope).checkpoints, retention);
      pruned = ids.length;
      return ids.length === 0 ? [] : [{ op: 'deleteCheckpoints', branchId, ids }];
    },
    () => undefined,
  );
  return pruned;
}

/** `FileStore.deleteCheckpoint`: refuses the branch's newest. */
export async function deleteCheckpoint(
  sessions: FileSessions,
  sessionId: string,
  branchId: string,
  id: string,
  scope: TenantScope,
): Promise<boolean> {
  assertBranchId(branchId);
  assertValidId('checkpoint', id);
  let existed = false;
  await sessions.write(
    sessionId,
    scope,
    (image) => {
      existed = ensureCheckpointDeletable(branchId, id, requireBranch(image, sessionId, branchId, scope).checkpoints);
      return existed ? [{ op: 'deleteCheckpoints', branchId, ids: [id] }] : [];
    },
    () => undefined,
  );
  return existed;
}

/** `FileStore.deleteCheckpointsOlderThan`: every session's, each branch's newest kept. */
export async function deleteCheckpointsOlderThan(
  sessions: FileSessions,
  all: Session[],
  before: string,
  scope: TenantScope,
): Promise<number> {
  let deleted = 0;
  for (const session of all) {
    if (scope.tenantId !== undefined && session.tenantId !== scope.tenantId) continue;
    await sessions
      .write(
        session.id,
        { ...(session.tenantId === undefined ? {} : { tenantId: session.tenantId }) },
        async (image, load) => {
          const ops: LogOp[] = [];
          for (const branch of image.branches.values()) {
            // The newest stays (a paused turn's); a damaged document is kept (its age is unknown).
            // Only those whose manifest says older are read (one whose manifest cannot be read is damaged).
            const older = branch.checkpoints
              .slice(0, -1)
              .filter((record) => record.manifest !== undefined && record.createdAt < before);
            await load.checkpoints(branch, older);
            const ids = older
              .filter((record) => createdBefore(record, session.id, branch.branch.id, before))
              .map((c) => c.id);
            if (ids.length > 0) ops.push({ op: 'deleteCheckpoints', branchId: branch.branch.id, ids });
          }
          deleted += ops.reduce((n, op) => n + (op as Extract<LogOp, { op: 'deleteCheckpoints' }>).ids.length, 0);
          return ops;
        },
        () => undefined,
      )
      .catch((error: unknown) => {
        if (error instanceof NotFoundError) return; // deleted meanwhile
        throw error;
      });
  }
  return deleted;
}

/** Whether a stored checkpoint was created before `before` (a damaged one is not: its age is unknown). */
function createdBefore(record: CheckpointRecord, sessionId: string, branchId: string, before: string): boolean {
  try {
    return loadRecord(record, sessionId, branchId).createdAt < before;
  } catch (error) {
    if (error instanceof CheckpointCorruptError) return false;
    throw error;
  }
}
