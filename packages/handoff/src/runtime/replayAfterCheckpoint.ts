import {
  type Checkpoint,
  type Message,
  type PendingWrite,
  type Request,
  requestKey,
  type Session,
  type StateContainer,
} from '@baton/core';
import { humanStepOf, replayHistory } from '../routing/replayHistory.js';
import type { RoutingDriver } from '../routing/routingDriver.js';
import { routingState } from '../routing/routingMachine.js';

/** A runtime's state as a checkpoint saved it; a load's replay changes the actor, state and pending writes in place. */
export interface ReplayTarget {
  actor: RoutingDriver;
  state: StateContainer;
  pendingRequests: readonly Request[];
  pendingWrites: Map<string, PendingWrite>;
}

/** What a load's replay leaves: the requests still pending, and whether a finished turn's state is to be saved. */
export interface Replayed {
  pendingRequests: Request[];
  /** The checkpoint's state patches belong to a finished turn whose settle has not saved them yet. */
  persistState: boolean;
  /** How many messages were committed after the checkpoint (and replayed). */
  replayed: number;
}

/**
 * Brings the state a checkpoint saved up to the branch's messages: the messages committed after it
 * settle pending writes and requests and move the routing machine, and the checkpoint's state patches
 * are applied unless the turn they belong to has ended and its settle wrote them to the documents.
 * Without a checkpoint every message is replayed.
 */
export function replayAfterCheckpoint(
  target: ReplayTarget,
  loaded: { session: Session; checkpoint: Checkpoint | undefined; messages: readonly Message[] },
): Replayed {
  const { session, checkpoint, messages } = loaded;
  // The checkpoint's machine has applied every message through its throughSeq; the rest is replayed.
  const after = checkpoint === undefined ? messages : messagesAfter(messages, checkpoint.throughSeq);
  const pendingRequests = replay(target, after, session);
  const persistState = applyUnsettledPatches(target, checkpoint, messages, session);
  return { pendingRequests, persistState, replayed: after.length };
}

/**
 * Replays the messages committed after the checkpoint: their results and answers settle pending writes
 * and requests, their routing effects move the machine.
 * @returns the requests still pending
 */
function replay(target: ReplayTarget, after: readonly Message[], session: Session): Request[] {
  const { actor, pendingWrites } = target;
  for (const message of after) {
    if (message.role === 'tool' && message.toolCallId !== undefined) pendingWrites.delete(message.toolCallId);
  }
  const answered = new Set(after.map((m) => (m.role === 'tool' ? m.toolCallId : humanStepOf(m))));
  let pendingRequests = target.pendingRequests.filter(
    (r) => !answered.has(requestKey(r)) && !pendingWrites.has(requestKey(r)),
  );
  // A closed session waits on nothing: a fork's requests were dropped (and withdrawn) by the close on another branch.
  if (session.status === 'closed') pendingRequests = [];
  replayHistory(actor, after);
  // Every request of a paused step was answered (the answers are pending writes) but the step did not go on: resume it.
  if (routingState(actor.getSnapshot()) === 'awaitingRequest' && pendingRequests.length === 0)
    actor.send({ type: 'RESUME' });
  return pendingRequests;
}

/**
 * State patches in a checkpoint belong to a turn that was not settled when it was saved: applies
 * them unless that turn has ended and its settle wrote them to the documents since.
 * @returns whether the patches were applied for a finished turn (its state is still to be saved)
 */
function applyUnsettledPatches(
  target: ReplayTarget,
  checkpoint: Checkpoint | undefined,
  messages: readonly Message[],
  session: Session,
): boolean {
  const patches = checkpoint?.statePatches;
  if (patches === undefined || patches.session.length + patches.branch.length === 0) return false;
  const snapshot = target.actor.getSnapshot();
  const turnFinished = routingState(snapshot) !== 'running' && routingState(snapshot) !== 'awaitingRequest';
  // `messages` starts at or before throughSeq: an answer older than that would not count anyway.
  const lastReply = turnFinished
    ? messages.findLast((m) => m.role === 'assistant' && (m.toolCalls?.length ?? 0) === 0)
    : undefined;
  const alreadySaved =
    lastReply !== undefined &&
    (checkpoint?.throughSeq ?? 0) <= lastReply.seq &&
    session.lastActivityAt >= lastReply.createdAt;
  if (alreadySaved) return false;
  target.state.apply(patches);
  return turnFinished;
}

/** The messages with a seq above `seq` (`messages` in seq order): found from the end, since they are usually few. */
function messagesAfter(messages: readonly Message[], seq: number): readonly Message[] {
  let start = messages.length;
  while (start > 0 && messages[start - 1]!.seq > seq) start -= 1;
  return start === 0 ? messages : messages.slice(start);
}
