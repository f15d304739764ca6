/**
 * What every store checks of checkpoints: their schema and ids before a save, their pending writes,
 * which ones retention drops, which one may be deleted, and that a batch's checkpoint is its branch's.
 */
import {
  CHECKPOINT_SCHEMA_VERSION,
  type Checkpoint,
  type PendingWrite,
  PendingWriteSchema,
  parseCheckpoint,
} from '../conversation/checkpoint.js';
import { CheckpointCorruptError, CheckpointInUseError, InvalidInputError } from '../errors.js';
import { assertValidId } from '../ids.js';
import { fastCheckpointCopy } from './checkpointFastCheck.js';
import { cloneData } from './cloneData.js';
import type { CheckpointRetention, StoreBatch } from './store.js';
import { assertBranchId, assertSessionId } from './storeIds.js';

/**
 * Validates a checkpoint before it is saved: its schema, then its session, branch and own ids and
 * its pending requests' ids (the rules `parseStoredCheckpoint` applies on read).
 * @returns the parsed checkpoint
 * @throws {CheckpointCorruptError} when it fails the schema or is not of {@link CHECKPOINT_SCHEMA_VERSION}; {@link InvalidIdError} for unsafe ids
 */
export function assertCheckpoint(checkpoint: Checkpoint): Checkpoint {
  const version = (checkpoint as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (version !== CHECKPOINT_SCHEMA_VERSION) {
    throw new CheckpointCorruptError(
      `A checkpoint is saved at schemaVersion ${CHECKPOINT_SCHEMA_VERSION}, not ${JSON.stringify(version)}; it was not saved.`,
    );
  }
  return assertCheckpointIds(fastCheckpointCopy(checkpoint) ?? parseCheckpoint(checkpoint));
}

/**
 * {@link assertCheckpoint}, returning a deep copy that shares no object with `checkpoint`: what a
 * store that keeps objects (`InMemoryStore`) stores. The common turn-end checkpoint is checked and
 * copied in one pass without zod ({@link fastCheckpointCopy}).
 * @throws what {@link assertCheckpoint} throws
 */
export function copyValidCheckpoint(checkpoint: Checkpoint): Checkpoint {
  const fast = fastCheckpointCopy(checkpoint);
  return fast === undefined ? cloneData(assertCheckpoint(checkpoint)) : assertCheckpointIds(fast);
}

function assertCheckpointIds(valid: Checkpoint): Checkpoint {
  assertSessionId(valid.sessionId);
  assertBranchId(valid.branchId);
  assertValidId('checkpoint', valid.id);
  if (valid.parentId !== null) assertValidId('checkpoint', valid.parentId);
  // A request id is a route segment (`POST /sessions/:id/requests/:requestId`): the id rule, as a read applies it.
  for (const request of valid.pendingRequests) assertValidId('request', request.id);
  return valid;
}

/**
 * Validates pending writes before they are saved.
 * @returns the parsed writes
 * @throws {InvalidInputError} naming the first bad write
 */
export function assertPendingWrites(writes: readonly PendingWrite[]): PendingWrite[] {
  return writes.map((write, index) => {
    const parsed = PendingWriteSchema.safeParse(write);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new InvalidInputError(
        `Pending write ${index} is invalid at ${issue?.path.join('.') || '(root)'}: ${issue?.message}.`,
      );
    }
    return parsed.data;
  });
}

/**
 * The ids of checkpoints outside the retention. The newest checkpoint is always kept.
 * @param checkpoints oldest first
 */
export function checkpointsToPrune(
  checkpoints: readonly Pick<Checkpoint, 'id' | 'createdAt'>[],
  retention: CheckpointRetention,
): string[] {
  const now = Date.now();
  return checkpoints
    .filter((checkpoint, index) => {
      const fromNewest = checkpoints.length - 1 - index;
      if (fromNewest === 0) return false;
      const tooMany = retention.last !== undefined && fromNewest >= retention.last;
      const tooOld = retention.maxAgeMs !== undefined && now - Date.parse(checkpoint.createdAt) > retention.maxAgeMs;
      return tooMany || tooOld;
    })
    .map((c) => c.id);
}

/**
 * Checks that checkpoint `id` may be deleted from a branch: it must not be the newest (a paused
 * turn resumes from it).
 * @param manifest the branch's checkpoints, oldest first
 * @returns whether the branch holds checkpoint `id`
 * @throws {CheckpointInUseError} when `id` is the branch's newest checkpoint
 * @example
 * ```ts
 * import { ensureCheckpointDeletable } from '@baton/core/store-kit';
 * ensureCheckpointDeletable('main', 'cp-1', [{ id: 'cp-1' }, { id: 'cp-2' }]); // true
 * ensureCheckpointDeletable('main', 'cp-2', [{ id: 'cp-1' }, { id: 'cp-2' }]); // throws CheckpointInUseError
 * ```
 */
export function ensureCheckpointDeletable(
  branchId: string,
  id: string,
  manifest: readonly Pick<Checkpoint, 'id'>[],
): boolean {
  if (manifest.at(-1)?.id === id) throw new CheckpointInUseError(id, branchId);
  return manifest.some((c) => c.id === id);
}

/**
 * Checks that a batch's checkpoint belongs to the batch's session branch.
 * @throws {InvalidInputError} naming the checkpoint otherwise
 */
export function assertBatchCheckpoint(batch: Pick<StoreBatch, 'sessionId' | 'branchId' | 'checkpoint'>): void {
  const checkpoint = batch.checkpoint;
  if (checkpoint === undefined || (checkpoint.sessionId === batch.sessionId && checkpoint.branchId === batch.branchId))
    return;
  throw new InvalidInputError(
    `A batch of session ${JSON.stringify(batch.sessionId)} branch ${JSON.stringify(batch.branchId)} cannot save checkpoint ${JSON.stringify(checkpoint.id)} of another branch.`,
  );
}
