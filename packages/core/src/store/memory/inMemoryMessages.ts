/**
 * `InMemoryStore`'s messages on a found session record: append, read along a branch's lineage, and
 * a durability point's batch. Messages are stored deep-frozen, own seqs consecutive per branch.
 */
import type { Message } from '../../conversation/message.js';
import { NotFoundError } from '../../errors.js';
import { cloneData, frozenMessageCopy } from '../cloneData.js';
import type { ReadMessagesOptions, StoreBatch, StoreBatchResult } from '../store.js';
import {
  assertBatchCheckpoint,
  assertBranchId,
  assertMessages,
  branchLineage,
  branchState,
  changedBranch,
  changedSession,
  copyValidCheckpoint,
  planAppend,
} from '../storeRules.js';
import { pruneRecordCheckpoints } from './inMemoryCheckpoints.js';
import { checkpointList, type SessionRecord } from './inMemoryRecords.js';

/** `InMemoryStore.appendMessages` on a found session: the messages not stored yet, frozen copies. */
export function appendRecordMessages(
  record: SessionRecord,
  sessionId: string,
  branchId: string,
  messages: readonly Message[],
): { inserted: number } {
  assertBranchId(branchId);
  assertMessages(messages);
  const own = record.messages.get(branchId);
  const branch = record.branches.get(branchId);
  if (own === undefined || branch === undefined) {
    throw new NotFoundError(
      `Branch ${JSON.stringify(branchId)} of session ${JSON.stringify(sessionId)} does not exist.`,
    );
  }
  const firstOwnSeq = branch.parent === undefined ? 1 : branch.parent.atSeq + 1;
  const lastSeq = firstOwnSeq - 1 + own.length; // own seqs are consecutive from firstOwnSeq (planAppend)
  const fresh = planAppend(branchId, messages, { firstOwnSeq, lastSeq, storedAt: (seq) => own[seq - firstOwnSeq] });
  for (const message of fresh) own.push(frozenMessageCopy(message));
  return { inserted: fresh.length };
}

/** `InMemoryStore.readMessages` on a found session: the stored (frozen) messages themselves. */
export function readRecordMessages(
  record: SessionRecord,
  sessionId: string,
  branchId: string,
  options: ReadMessagesOptions,
): Message[] {
  assertBranchId(branchId);
  let out: Message[] = [];
  for (const { branch, fromSeq, throughSeq } of branchLineage(
    branchId,
    (id) => record.branches.get(id),
    sessionId,
    options,
  )) {
    const own = record.messages.get(branch.id)!;
    // Own seqs are consecutive from the branch's first own seq (planAppend): the range is a slice of the array.
    const firstOwnSeq = branch.parent === undefined ? 1 : branch.parent.atSeq + 1;
    const from = Math.max(fromSeq, firstOwnSeq) - firstOwnSeq;
    const to = Math.min(throughSeq, firstOwnSeq - 1 + own.length) - firstOwnSeq + 1;
    if (to <= from) continue;
    if (out.length === 0) out = from === 0 && to === own.length ? own.slice() : own.slice(from, to);
    else for (let i = from; i < to; i += 1) out.push(own[i]!);
  }
  return out;
}

/**
 * `InMemoryStore.writeBatch` on a found session: every check passes before anything changes.
 * @throws {ConcurrencyError} for a taken seq or a stale version; {@link NotFoundError} for a missing branch
 */
export function writeRecordBatch(record: SessionRecord, batch: StoreBatch): StoreBatchResult {
  const { sessionId, branchId } = batch;
  assertBranchId(branchId);
  const own = record.messages.get(branchId);
  const branch = record.branches.get(branchId);
  if (own === undefined || branch === undefined)
    throw new NotFoundError(
      `Branch ${JSON.stringify(branchId)} of session ${JSON.stringify(sessionId)} does not exist.`,
    );
  let fresh: Message[] = [];
  if (batch.messages !== undefined) {
    assertMessages(batch.messages);
    const firstOwnSeq = branch.parent === undefined ? 1 : branch.parent.atSeq + 1;
    fresh = planAppend(branchId, batch.messages, {
      firstOwnSeq,
      lastSeq: firstOwnSeq - 1 + own.length,
      storedAt: (seq) => own[seq - firstOwnSeq],
    });
  }
  const nextBranch =
    batch.branch && changedBranch(branch, branchState(batch.branch.state), batch.branch.expectedVersion);
  const nextSession =
    batch.session && changedSession(record.session, batch.session.change, batch.session.expectedVersion);
  const checkpoint = batch.checkpoint && copyValidCheckpoint(batch.checkpoint);
  assertBatchCheckpoint(batch);
  for (const message of fresh) own.push(frozenMessageCopy(message));
  const result: StoreBatchResult = { inserted: fresh.length };
  if (nextBranch !== undefined) {
    record.branches.set(branchId, nextBranch);
    result.branch = cloneData(nextBranch);
  }
  if (nextSession !== undefined) {
    record.session = nextSession;
    result.session = cloneData(nextSession);
  }
  if (checkpoint !== undefined) {
    const list = checkpointList(record, branchId);
    if (!list.some((c) => c.id === checkpoint.id)) list.push(checkpoint);
  }
  if (batch.pruneCheckpoints !== undefined)
    result.pruned = pruneRecordCheckpoints(record, branchId, checkpointList(record, branchId), batch.pruneCheckpoints);
  return result;
}
