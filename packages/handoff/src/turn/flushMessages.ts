import { ConcurrencyError } from '@baton/core';
import type { SessionRuntime } from '../session/sessionRuntime.js';

/**
 * Writes the messages committed in memory but not stored yet (`runtime.history.unstored`) with one
 * `appendMessages` call, in seq order. The handoff runtime calls it at every durability point:
 * before a checkpoint is saved (a checkpoint's `throughSeq` never points past stored messages, and
 * a tool's pending writes attach to a checkpoint saved after its call is stored), before a turn
 * settles, pauses or closes the session, and when a turn fails or is abandoned (see
 * {@link flushAfterFailure}). Does nothing when everything is stored.
 *
 * @throws {ConcurrencyError} when another writer (process) already took one of the seqs: nothing of
 *   this batch is applied, the runtime is marked stale and reloads from the store on the next call
 * @throws {StoreError} (or what the store throws) when the write fails; the runtime is marked stale
 * @example
 * ```ts
 * await flushMessages(runtime); // then save the checkpoint that points at them
 * ```
 */
export async function flushMessages(runtime: SessionRuntime): Promise<void> {
  const batch = runtime.history.unstored;
  const first = batch[0];
  if (first === undefined) return;
  const last = batch.at(-1)!;
  try {
    await runtime.config.store.appendMessages(runtime.sessionId, runtime.branchId, batch, runtime.scope);
  } catch (error) {
    runtime.stale = true;
    if (error instanceof ConcurrencyError) {
      const seqs = first.seq === last.seq ? `seq ${first.seq}` : `one of seqs ${first.seq}–${last.seq}`;
      throw new ConcurrencyError(
        `Session ${JSON.stringify(runtime.sessionId)} branch ${JSON.stringify(runtime.branchId)} was written by another writer (${seqs} is taken). This call was not applied; call again to continue from the stored history.`,
        { cause: error },
      );
    }
    throw error;
  }
  runtime.history.markStored(last.seq);
  runtime.noteWrite();
}

/**
 * Keeps the finished work of a turn that failed or was abandoned (the caller stopped reading its
 * events): flushes what is buffered unless the runtime is already stale (a failed flush is not
 * retried: the store decides what happened, and the next call reloads from it). A failure of this
 * flush is swallowed (the turn's own error is the one the caller gets) and marks the runtime stale.
 */
export async function flushAfterFailure(runtime: SessionRuntime): Promise<void> {
  if (runtime.stale || runtime.history.unstored.length === 0) return;
  try {
    await flushMessages(runtime);
  } catch {
    runtime.stale = true;
  }
}
