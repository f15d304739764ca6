import {
  type Checkpoint,
  type CheckpointRetention,
  ConcurrencyError,
  type SessionChange,
  type State,
  type StoreBatch,
  writeStoreBatch,
} from '@baton/core';
import type { SessionRuntime } from './sessionRuntime.js';

/** What a durability point stores besides the buffered messages (see {@link writeToStore}). */
export interface DurableWrites {
  /** The branch's state, compare-and-set against `runtime.branch.version`. */
  branchState?: State;
  /** A change of the session, compare-and-set against `runtime.session.version`. */
  sessionChange?: SessionChange;
  /** A checkpoint saved after the messages (its `throughSeq` points at them). */
  checkpoint?: Checkpoint;
  /** The branch's old checkpoints pruned after it, in the same write (see `StoreBatch.pruneCheckpoints`). */
  pruneCheckpoints?: CheckpointRetention;
}

/**
 * The handoff runtime's one writer: stores one durability point with one store write ({@link writeStoreBatch}: one fsync'd log line
 * on `FileStore`, the separate calls in order on a store without `writeBatch`): the messages
 * committed in memory but not stored yet (`runtime.history.unstored`), then the branch state, the
 * session change and the checkpoint given. The handoff runtime calls it at every durability point:
 * before a checkpoint is saved (a checkpoint's `throughSeq` never points past stored messages, and
 * a tool's pending writes attach to a checkpoint saved after its call is stored), when a turn
 * settles, pauses or closes the session, and when a turn fails or is abandoned (see
 * {@link writeBufferedAfterFailure}). Does nothing when there is nothing to store. On success the runtime's
 * session and branch documents are the stored ones.
 *
 * @throws {ConcurrencyError} when another writer (process) already took one of the seqs or changed
 *   the session or branch: the runtime is marked stale and reloads from the store on the next call
 * @throws {StoreError} (or what the store throws) when the write fails; the runtime is marked stale
 * @example
 * ```ts
 * await writeToStore(runtime, { checkpoint }); // the buffered messages, then the checkpoint that points at them
 * ```
 */
export async function writeToStore(runtime: SessionRuntime, writes: DurableWrites = {}): Promise<void> {
  const batch = runtime.history.unstored;
  const first = batch[0];
  const last = batch.at(-1);
  const { sessionChange, branchState, checkpoint, pruneCheckpoints } = writes;
  if (first === undefined && sessionChange === undefined && branchState === undefined && checkpoint === undefined)
    return;
  const request: StoreBatch = { sessionId: runtime.sessionId, branchId: runtime.branchId };
  if (runtime.tenantId !== undefined) request.tenantId = runtime.tenantId;
  if (first !== undefined) request.messages = batch;
  if (branchState !== undefined) request.branch = { state: branchState, expectedVersion: runtime.branch.version };
  if (sessionChange !== undefined)
    request.session = { change: sessionChange, expectedVersion: runtime.session.version };
  if (checkpoint !== undefined) request.checkpoint = checkpoint;
  if (pruneCheckpoints !== undefined) request.pruneCheckpoints = pruneCheckpoints;
  let result: Awaited<ReturnType<typeof writeStoreBatch>>;
  try {
    result = await writeStoreBatch(runtime.config.store, request);
  } catch (error) {
    runtime.markStale();
    if (error instanceof ConcurrencyError && first !== undefined && last !== undefined) {
      const seqs = first.seq === last.seq ? `seq ${first.seq}` : `one of seqs ${first.seq}–${last.seq}`;
      throw new ConcurrencyError(
        `Session ${JSON.stringify(runtime.sessionId)} branch ${JSON.stringify(runtime.branchId)} was written by another writer (${seqs} is taken, or the session changed). This call was not applied; call again to continue from the stored history.`,
        { cause: error },
      );
    }
    throw error;
  }
  if (last !== undefined) runtime.history.markStored(last.seq);
  runtime.noteStored(result);
  runtime.noteWrite();
}

/**
 * Writes the messages committed in memory but not stored yet (the buffer a `BufferedJournal` fills), alone (see {@link writeToStore}).
 * @throws {ConcurrencyError} when another writer took one of the seqs; the runtime is marked stale
 */
export async function writeBuffered(runtime: SessionRuntime): Promise<void> {
  if (runtime.history.unstored.length === 0) return;
  await writeToStore(runtime);
}

/**
 * Keeps the finished work of a turn that failed or was abandoned (the caller stopped reading its
 * events): writes what is buffered unless the runtime is already stale (a failed flush is not
 * retried: the store decides what happened, and the next call reloads from it). A failure of this
 * write is swallowed (the turn's own error is the one the caller gets) and marks the runtime stale.
 */
export async function writeBufferedAfterFailure(runtime: SessionRuntime): Promise<void> {
  if (runtime.stale || runtime.history.unstored.length === 0) return;
  try {
    await writeBuffered(runtime);
  } catch {
    runtime.markStale();
  }
}
