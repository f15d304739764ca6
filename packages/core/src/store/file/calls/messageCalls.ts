/**
 * `FileStore`'s message calls: `appendMessages`, `readMessages` (reading from the log only the runs
 * of messages asked for) and `writeBatch` (a durability point of a turn as one log line).
 */
import type { Message } from '../../../conversation/message.js';
import { cloneData } from '../../cloneData.js';
import type { ReadMessagesOptions, StoreBatch, StoreBatchResult, TenantScope } from '../../store.js';
import {
  assertBatchCheckpoint,
  assertBranchId,
  assertCheckpoint,
  assertMessages,
  assertSessionChange,
  branchLineage,
  branchState,
  changedBranch,
  changedSession,
  checkpointsToPrune,
} from '../../storeRules.js';
import type { FileSessions } from '../fileSessions.js';
import type { LogOp } from '../log/logOps.js';
import { appendOps, checkpointOps, requireBranch, requireSession, storedSeqs } from '../log/logPlans.js';
import { type BranchImage, runsBetween } from '../log/sessionImage.js';
import type { ImageLoader } from '../log/sessionLogs.js';

/** The messages of `ops` (from {@link appendOps}): how many were inserted. */
const insertedBy = (ops: readonly LogOp[]): number => (ops[0]?.op === 'messages' ? ops[0].messages.length : 0);

/** {@link appendOps} after reading the stored messages the batch names again (a retried write compares them). */
async function plannedAppend(branch: BranchImage, messages: readonly Message[], load: ImageLoader): Promise<LogOp[]> {
  const stored = storedSeqs(branch, messages);
  if (stored !== undefined) await load.messages(branch, stored.fromSeq, stored.throughSeq);
  return appendOps(branch, messages);
}

/** `FileStore.appendMessages`. */
export async function appendMessages(
  sessions: FileSessions,
  sessionId: string,
  branchId: string,
  messages: readonly Message[],
  scope: TenantScope,
): Promise<{ inserted: number }> {
  assertBranchId(branchId);
  assertMessages(messages);
  let inserted = 0;
  await sessions.write(
    sessionId,
    scope,
    async (image, load) => {
      const ops = await plannedAppend(requireBranch(image, sessionId, branchId, scope), messages, load);
      inserted = insertedBy(ops);
      return ops;
    },
    () => undefined,
  );
  return { inserted };
}

/**
 * `FileStore.readMessages`: the runs of the lineage's seqs are read from the log (or memory),
 * nothing else. The messages are the image's own, deep-frozen: handed out without a copy.
 */
export async function readMessages(
  sessions: FileSessions,
  sessionId: string,
  branchId: string,
  options: ReadMessagesOptions,
): Promise<Message[]> {
  assertBranchId(branchId);
  return sessions.view(sessionId, async (found, load) => {
    const image = requireSession(found, sessionId, options);
    const segments = branchLineage(branchId, (id) => image.branches.get(id)?.branch, sessionId, options);
    for (const { branch, fromSeq, throughSeq } of segments)
      await load.messages(image.branches.get(branch.id)!, fromSeq, throughSeq);
    const out: Message[] = [];
    for (const { branch, fromSeq, throughSeq } of segments) {
      for (const run of runsBetween(image.branches.get(branch.id)!, fromSeq, throughSeq)) {
        const through = Math.min(throughSeq, run.firstSeq + run.count - 1);
        for (let seq = Math.max(fromSeq, run.firstSeq); seq <= through; seq += 1)
          out.push(run.messages![seq - run.firstSeq]!);
      }
    }
    return out;
  });
}

/** `FileStore.writeBatch`: every check passes first, then one line holds the batch (its prune included). */
export async function writeBatch(sessions: FileSessions, batch: StoreBatch): Promise<StoreBatchResult> {
  const { sessionId, branchId } = batch;
  const scope: TenantScope = batch.tenantId === undefined ? {} : { tenantId: batch.tenantId };
  assertBranchId(branchId);
  if (batch.messages !== undefined) assertMessages(batch.messages);
  const state = batch.branch && branchState(batch.branch.state);
  if (batch.session !== undefined) assertSessionChange(batch.session.change);
  const checkpoint = batch.checkpoint && assertCheckpoint(batch.checkpoint);
  assertBatchCheckpoint(batch);
  let inserted = 0;
  let pruned = 0;
  return sessions.write(
    sessionId,
    scope,
    async (image, load) => {
      const branch = requireBranch(image, sessionId, branchId, scope);
      const ops = batch.messages === undefined ? [] : await plannedAppend(branch, batch.messages, load);
      inserted = insertedBy(ops);
      if (state !== undefined)
        ops.push({ op: 'branch', branch: changedBranch(branch.branch, state, batch.branch!.expectedVersion) });
      if (batch.session !== undefined)
        ops.push({
          op: 'session',
          session: changedSession(image.session, batch.session.change, batch.session.expectedVersion),
        });
      if (checkpoint !== undefined) ops.push(...checkpointOps(branch, checkpoint));
      if (batch.pruneCheckpoints !== undefined) {
        // Retention over the branch's checkpoints as they will be after this line: the new one is the newest.
        const saved = ops.at(-1)?.op === 'checkpoint' ? [checkpoint!] : [];
        const ids = checkpointsToPrune([...branch.checkpoints, ...saved], batch.pruneCheckpoints);
        pruned = ids.length;
        if (pruned > 0) ops.push({ op: 'deleteCheckpoints', branchId, ids });
      }
      return ops;
    },
    (image) => {
      const result: StoreBatchResult = { inserted };
      if (batch.pruneCheckpoints !== undefined) result.pruned = pruned;
      if (batch.session !== undefined) result.session = cloneData(image.session);
      if (state !== undefined) result.branch = cloneData(image.branches.get(branchId)!.branch);
      return result;
    },
  );
}
