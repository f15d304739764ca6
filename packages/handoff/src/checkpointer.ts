import { CHECKPOINT_SCHEMA_VERSION, type Checkpoint, type CheckpointManifestEntry, type CheckpointRetention, createId, isoNow } from '@baton/core';
import { flushMessages } from './flushMessages.js';
import type { CheckpointKeep } from './handoffTypes.js';
import type { SessionRuntime } from './sessionRuntime.js';

/**
 * Saves a checkpoint of where the runtime's turn stands: the routing machine's persisted snapshot,
 * `throughSeq` (the branch head), pending requests, pending writes and the state patches of the
 * unfinished turn. It holds no messages, so its size does not grow with the conversation
 * (DESIGN.md invariant 2). Messages committed but not stored yet are stored first (one append), so
 * `throughSeq` never points past the stored history. A `checkpoint` event is queued on the runtime.
 *
 * @returns the manifest entry of the saved checkpoint
 * @throws {ConcurrencyError} when another writer took one of the buffered messages' seqs (see {@link flushMessages})
 * @throws {StoreError} (or what the store throws) when a write fails
 */
export async function saveCheckpoint(runtime: SessionRuntime): Promise<CheckpointManifestEntry> {
  await flushMessages(runtime);
  const checkpoint: Checkpoint = {
    schemaVersion: CHECKPOINT_SCHEMA_VERSION,
    id: createId(),
    parentId: runtime.checkpoint?.id ?? null,
    sessionId: runtime.sessionId,
    branchId: runtime.branchId,
    step: (runtime.checkpoint?.step ?? 0) + 1,
    createdAt: isoNow(),
    throughSeq: runtime.history.headSeq,
    machine: runtime.core.persistRouting(runtime.snapshot),
    pendingRequests: runtime.pendingRequests,
    pendingWrites: [...runtime.pendingWrites.values()],
    statePatches: { session: [...runtime.state.patches.session], branch: [...runtime.state.patches.branch] },
  };
  await runtime.config.store.saveCheckpoint(checkpoint);
  runtime.checkpoint = { id: checkpoint.id, step: checkpoint.step };
  const entry: CheckpointManifestEntry = {
    id: checkpoint.id,
    parentId: checkpoint.parentId,
    step: checkpoint.step,
    throughSeq: checkpoint.throughSeq,
    createdAt: checkpoint.createdAt,
  };
  runtime.queue.push({ type: 'checkpoint', sessionId: runtime.sessionId, branchId: runtime.branchId, checkpoint: entry });
  return entry;
}

/** The store retention of a `keep` option; `undefined` for `'all'` (nothing is pruned). */
export function retentionOf(keep: CheckpointKeep): CheckpointRetention | undefined {
  if (keep === 'all') return undefined;
  if (keep === 'latest') return { last: 1 };
  return keep;
}

/** Deletes the branch's checkpoints outside the workflow's retention (the newest is always kept). */
export async function pruneCheckpoints(runtime: SessionRuntime): Promise<void> {
  const retention = retentionOf(runtime.config.checkpointKeep);
  if (retention === undefined) return;
  await runtime.config.store.pruneCheckpoints(runtime.sessionId, runtime.branchId, retention);
}
