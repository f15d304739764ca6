import type { Checkpoint, CheckpointManifestEntry, PendingWrite } from '../../conversation/checkpoint.js';
import { NotFoundError } from '../../errors.js';
import { assertValidId } from '../../ids.js';
import { cloneData } from '../cloneData.js';
import type { CheckpointRetention, TenantScope } from '../store.js';
import { assertPendingWrites, checkpointsToPrune, ensureCheckpointDeletable } from '../storeRules.js';
import type { SessionRecord } from './inMemoryRecords.js';

/** `InMemoryStore.putPendingWrites` on a branch's checkpoints: adds the writes whose tool call the checkpoint has none for. */
export function addPendingWrites(list: Checkpoint[], checkpointId: string, writes: readonly PendingWrite[]): void {
  assertValidId('checkpoint', checkpointId);
  const valid = assertPendingWrites(writes);
  const checkpoint = list.find((c) => c.id === checkpointId);
  if (checkpoint === undefined) throw new NotFoundError(`Checkpoint ${JSON.stringify(checkpointId)} does not exist.`);
  for (const write of valid) {
    if (!checkpoint.pendingWrites.some((w) => w.toolCallId === write.toolCallId))
      checkpoint.pendingWrites.push(cloneData(write));
  }
}

/** `InMemoryStore.loadCheckpoint` on a branch's checkpoints: a copy of checkpoint `id`, or of the newest. */
export function findCheckpoint(list: readonly Checkpoint[], id: string | undefined): Checkpoint | undefined {
  if (id !== undefined) assertValidId('checkpoint', id);
  const found = id === undefined ? list.at(-1) : list.find((c) => c.id === id);
  return found && cloneData(found);
}

/** `InMemoryStore.listCheckpoints`: the manifest entry of each checkpoint, oldest first. */
export function checkpointManifest(list: readonly Checkpoint[]): CheckpointManifestEntry[] {
  return list.map(({ id, parentId, step, throughSeq, createdAt }) => ({ id, parentId, step, throughSeq, createdAt }));
}

/** `InMemoryStore.pruneCheckpoints` on the session's record: keeps what `retention` keeps; returns how many went. */
export function pruneRecordCheckpoints(
  record: SessionRecord,
  branchId: string,
  list: readonly Checkpoint[],
  retention: CheckpointRetention,
): number {
  const doomed = new Set(checkpointsToPrune(list, retention));
  const kept = list.filter((c) => !doomed.has(c.id));
  record.checkpoints.set(branchId, kept);
  return list.length - kept.length;
}

/** `InMemoryStore.deleteCheckpoint` on the session's record: false when there was no such checkpoint. */
export function deleteRecordCheckpoint(
  record: SessionRecord,
  branchId: string,
  list: readonly Checkpoint[],
  id: string,
): boolean {
  assertValidId('checkpoint', id);
  if (!ensureCheckpointDeletable(branchId, id, list)) return false;
  record.checkpoints.set(
    branchId,
    list.filter((c) => c.id !== id),
  );
  return true;
}

/** `InMemoryStore.deleteCheckpointsOlderThan` over all sessions (of the scope's tenant): each branch's newest stays. */
export function deleteCheckpointsBefore(records: Iterable<SessionRecord>, before: string, scope: TenantScope): number {
  let deleted = 0;
  for (const record of records) {
    if (scope.tenantId !== undefined && record.session.tenantId !== scope.tenantId) continue;
    for (const [branchId, list] of record.checkpoints) {
      const kept = list.filter((c, index) => c.createdAt >= before || index === list.length - 1); // the newest stays
      deleted += list.length - kept.length;
      record.checkpoints.set(branchId, kept);
    }
  }
  return deleted;
}
