import type { Store, StoreBatch, StoreBatchResult } from './store.js';
import { assertBatchCheckpoint } from './storeRules.js';

/**
 * Stores the writes of one durability point: with the store's own `writeBatch` when it has one
 * (all or nothing, one durable write), otherwise with the separate calls in the batch's order
 * (messages, branch, session, checkpoint, prune of old checkpoints), each durable when it returns,
 * stopping at the first failure (what was stored before it stays, as with the separate calls).
 *
 * @param store any {@link Store}
 * @param batch `{ sessionId, branchId, tenantId?, messages?, branch?, session?, checkpoint?, pruneCheckpoints? }`
 * @returns `{ inserted, session?, branch?, pruned? }` (`pruned`: checkpoints deleted, when a prune was asked for)
 * @throws what the store's calls throw: {@link ConcurrencyError} for a taken seq or a stale
 *   version, {@link NotFoundError} for a missing session or branch, {@link InvalidInputError}
 * @example
 * ```ts
 * import { writeStoreBatch } from '@baton/core';
 * const { session } = await writeStoreBatch(store, {
 *   sessionId: 'chat-1', branchId: 'main', messages,
 *   session: { change: { lastActivityAt: new Date().toISOString() }, expectedVersion: 3 },
 * });
 * ```
 */
export function writeStoreBatch(store: Store, batch: StoreBatch): Promise<StoreBatchResult> {
  // Not an async function: the store's own write is returned as it is (one promise, not two); a synchronous throw still rejects.
  try {
    return typeof store.writeBatch === 'function' ? store.writeBatch(batch) : writeSeparately(store, batch);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The batch's writes with the separate calls, in order, for a store without `writeBatch`. */
async function writeSeparately(store: Store, batch: StoreBatch): Promise<StoreBatchResult> {
  const { sessionId, branchId } = batch;
  const scope = batch.tenantId === undefined ? {} : { tenantId: batch.tenantId };
  const checkpoint = batch.checkpoint;
  assertBatchCheckpoint(batch);
  const result: StoreBatchResult = { inserted: 0 };
  if (batch.messages !== undefined && batch.messages.length > 0)
    result.inserted = (await store.appendMessages(sessionId, branchId, batch.messages, scope)).inserted;
  if (batch.branch !== undefined) {
    result.branch = await store.updateBranch(
      sessionId,
      branchId,
      { state: batch.branch.state },
      { ...scope, expectedVersion: batch.branch.expectedVersion },
    );
  }
  if (batch.session !== undefined)
    result.session = await store.updateSession(sessionId, batch.session.change, {
      ...scope,
      expectedVersion: batch.session.expectedVersion,
    });
  if (checkpoint !== undefined) await store.saveCheckpoint(checkpoint, scope);
  if (batch.pruneCheckpoints !== undefined)
    result.pruned = await store.pruneCheckpoints(sessionId, branchId, batch.pruneCheckpoints, scope);
  return result;
}
