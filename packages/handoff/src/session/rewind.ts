import {
  branchStateAt,
  CHECKPOINT_SCHEMA_VERSION,
  type Checkpoint,
  createId,
  isoNow,
  type Message,
  NotFoundError,
  type State,
} from '@baton/core';
import type { SessionRuntime } from '../runtime/sessionRuntime.js';

/**
 * Time travel: makes branch `branchId` that continues from checkpoint `checkpointId` of the
 * runtime's branch, as it stood then. The new branch refers to the first `throughSeq` messages
 * (nothing is copied), starts from the branch state of that moment, and gets one checkpoint: a copy
 * of the chosen one as it was saved (routing state, pending requests with fresh ids, the tool
 * results finished by then), so a turn that was paused there is paused again and can be answered
 * differently, and a turn that was running there is finished by the next call. Work recorded after
 * the checkpoint on the original branch (tools that finished later, answers to its requests) is the
 * path not taken: on the new branch it is done again. The original branch is not changed. Session-scoped
 * state is shared by all branches and is not rewound.
 *
 * @returns the id of the new branch's checkpoint
 * @throws {NotFoundError} when the branch has no such checkpoint; `ConcurrencyError` when `branchId` exists;
 *   `CheckpointCorruptError` when the checkpoint is damaged
 */
export async function rewindTo(runtime: SessionRuntime, checkpointId: string, branchId: string): Promise<string> {
  const { store } = runtime.config;
  const checkpoint = await store.loadCheckpoint(runtime.sessionId, runtime.branchId, checkpointId, runtime.scope);
  if (checkpoint === undefined) {
    throw new NotFoundError(
      `Branch ${JSON.stringify(runtime.branchId)} has no checkpoint ${JSON.stringify(checkpointId)}; see session.checkpoints().`,
    );
  }
  const midTurn =
    checkpoint.machine !== undefined &&
    ['running', 'awaitingRequest'].includes(String((checkpoint.machine as { value?: unknown }).value));
  await runtime.completeHistory();
  const messages = runtime.history.messages;
  // The branch document holds the state as of the last settled turn; the checkpoint's patches are
  // the unfinished turn's and are applied on load. At a turn's end every change is on the messages.
  const state: State = midTurn
    ? branchStateAt(messages, turnStartSeq(messages, checkpoint.throughSeq) - 1)
    : branchStateAt(messages, checkpoint.throughSeq);
  await store.forkBranch(
    runtime.sessionId,
    { branchId, parent: { branchId: runtime.branchId, atSeq: checkpoint.throughSeq }, state },
    runtime.scope,
  );
  const id = createId();
  const copy: Checkpoint = {
    ...checkpoint,
    schemaVersion: CHECKPOINT_SCHEMA_VERSION,
    id,
    parentId: null,
    branchId,
    step: 1,
    createdAt: isoNow(),
    pendingRequests: checkpoint.pendingRequests.map((request) => ({
      ...request,
      id: createId(),
      conversationRef: { branchId, throughSeq: request.conversationRef.throughSeq },
    })),
    // Results recorded after the checkpoint was saved (a tool that finished later, an answer to its
    // request) belong to the path not taken: on the new branch that work is done again.
    pendingWrites: checkpoint.pendingWrites.filter((write) => write.createdAt <= checkpoint.createdAt),
    statePatches: { session: [], branch: midTurn ? checkpoint.statePatches.branch : [] },
  };
  await store.saveCheckpoint(copy, runtime.scope);
  return id;
}

/** The seq of the first user message of the turn that `throughSeq` falls in (1 when there is none). */
function turnStartSeq(messages: readonly Message[], throughSeq: number): number {
  let start = 1;
  let inUserRun = false;
  for (const message of messages) {
    if (message.seq > throughSeq) break;
    if (message.role === 'user') {
      if (!inUserRun) start = message.seq;
      inUserRun = true;
    } else inUserRun = false;
  }
  return start;
}
