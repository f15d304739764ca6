import {
  answerOpenToolCalls as answerStoredToolCalls,
  type BatonEvent,
  findOpenToolCalls,
  MAIN_BRANCH,
  type Message,
  type Request,
  type SessionChange,
} from '@baton/core';
import { routingState } from '../routing/routingMachine.js';
import { saveCheckpoint } from '../runtime/checkpointer.js';
import { writeBuffered } from '../runtime/storeWriter.js';
import { answerOpenToolCalls } from './openToolCalls.js';
import type { SessionRuntime } from '../runtime/sessionRuntime.js';
import { withdrawRequests } from './withdrawRequests.js';

/**
 * Closes the session: tool calls still waiting (pending requests), on this branch and on every other
 * branch of the session, get a result (their finished pending write, or a "cancelled" error) so no
 * tool call is left dangling; every context provider's
 * `onSessionClose` runs once; the session document becomes `closed`; the routing machine reaches its
 * final state and a last checkpoint is saved; then participants withdraw what they queued for the
 * dropped requests of every branch (a `HumanExecutor`'s tasks). Does nothing when the session is already closed.
 *
 * @returns yields the `message` events of the results it committed, then `session.closed`
 */
export async function* closeSession(runtime: SessionRuntime, reason: string): AsyncGenerator<BatonEvent, void> {
  if (runtime.session.status === 'closed') return;
  const base = { sessionId: runtime.sessionId, branchId: runtime.branchId };
  // The close's own queue of events raised on the side (its checkpoints), streamed before its next event.
  const raised: BatonEvent[] = [];
  const stopListening = runtime.listen((event) => raised.push(event));
  try {
    const dropped = runtime.dropRequests();
    // The first result carries the close as its control: committing it closes the routing machine,
    // so a crash from here on finishes this close on the next load (with this reason) instead of
    // running the agent again.
    const cancelled = `Cancelled: the session was closed (${reason}) before this call was answered.`;
    const committed = await answerOpenToolCalls(runtime, cancelled, { kind: 'end_conversation', reason });
    if (committed.length > 0) {
      await writeBuffered(runtime);
      for (const message of committed) {
        yield* raised.splice(0);
        yield { type: 'message', ...base, message };
      }
    }
    const others = await storeClose(runtime, reason, cancelled);
    await withdrawRequests(runtime, [...dropped, ...others]);
  } finally {
    stopListening();
  }
  yield* raised.splice(0);
  yield { type: 'session.closed', ...base, reason };
}

/**
 * Stores the close: the buffered messages, the other branches' open calls answered, the providers'
 * `onSessionClose`, the session document closed, the routing machine's final state checkpointed.
 * @returns the requests the other branches were paused on (dropped)
 */
async function storeClose(runtime: SessionRuntime, reason: string, cancelled: string): Promise<Request[]> {
  // Every message is stored before context providers see the history (an episode points at stored messages).
  await writeBuffered(runtime);
  const { store } = runtime.config;
  const { scope } = runtime;
  // Other branches (forks) paused on a request: their calls are answered in the store the way the
  // idle sweep answers them (the close travels with the results), and their requests withdrawn by the caller.
  const others = await findOpenToolCalls(store, runtime.sessionId, { ...scope, exceptBranchId: runtime.branchId });
  await answerStoredToolCalls(store, runtime.sessionId, others, { content: cancelled, reason, scope });
  await closeDocument(runtime, reason);
  // Session objects of the other branches hold the session as it was, and some of their branches got results.
  runtime.core.outdateSession(runtime.sessionId);
  runtime.noteWrite();
  runtime.noteClosed();
  // An agent's end_conversation already closed the machine when its result was committed.
  if (routingState(runtime.actor.getSnapshot()) !== 'closed') runtime.actor.send({ type: 'CLOSE' });
  await saveCheckpoint(runtime, {}, true); // a prune point: a due prune joins the write
  return others.flatMap((branch) => branch.requests);
}

/**
 * Runs every context provider's `onSessionClose` on the session as it is about to be stored, then
 * marks the session document closed (compare-and-set); a failed provider (e.g. an episode that
 * could not be saved) leaves it open for a retried close.
 */
async function closeDocument(runtime: SessionRuntime, reason: string): Promise<void> {
  const { store, contextProviders } = runtime.config;
  // The whole main branch: held in memory, or read (a fork, or a history loaded by a window).
  const messages =
    runtime.branchId === MAIN_BRANCH && runtime.history.complete
      ? runtime.history.messages
      : await store.readMessages(runtime.sessionId, MAIN_BRANCH, runtime.scope);
  const now = new Date().toISOString();
  const change: SessionChange = { status: 'closed', closedAt: now, closedReason: reason, lastActivityAt: now };
  const closing = { ...runtime.session, ...change };
  for (const provider of contextProviders) {
    await provider.onSessionClose?.({ session: closing, reason, messages, agents: agentsOf(messages), store });
  }
  if (runtime.state.patches.session.length > 0) change.state = runtime.state.session;
  try {
    runtime.noteStored({
      session: await store.updateSession(runtime.sessionId, change, {
        ...runtime.scope,
        expectedVersion: runtime.session.version,
      }),
    });
  } catch (error) {
    runtime.markStale();
    throw error;
  }
}

/** The agents that wrote assistant messages, in order of first appearance. */
function agentsOf(messages: readonly Message[]): string[] {
  const agents = new Set<string>();
  for (const message of messages)
    if (message.role === 'assistant' && message.agent !== undefined) agents.add(message.agent);
  return [...agents];
}
