import type { Message, PendingWrite } from '@baton/core';
import { type RoutingActor, routingState } from './routingMachine.js';

/** What replaying committed messages through the routing machine found. */
export interface ReplayResult {
  /** The last answer to the user that ended a turn during the replay. */
  lastReply?: Message;
  /** Set when a tool result ended the conversation (`end_conversation`) and the session is not closed yet. */
  endConversation?: string;
}

/** The control a stored tool result carries (`metadata.control`), if any. */
export function storedControl(message: Message): PendingWrite['control'] {
  const control = message.metadata?.control as PendingWrite['control'] | undefined;
  return control !== undefined && typeof control === 'object' && typeof control.kind === 'string' ? control : undefined;
}

/**
 * Brings the routing machine up to date with messages committed after its snapshot (docs/architecture.md
 * invariant 6, deterministic replay): a user message starts a turn, a tool result with
 * `metadata.control` of kind `handoff` hands off, an assistant message without tool calls answers
 * the user, and tool results after a paused step resume it. Used when loading a session whose newest
 * checkpoint is older than its history (a crash mid-turn, `'manual'` checkpoints, a fork).
 *
 * @param actor a started routing actor, at the state of the checkpoint (or initial)
 * @param messages the messages after the checkpoint's `throughSeq`, oldest first
 */
export function replayHistory(actor: RoutingActor, messages: readonly Message[]): ReplayResult {
  const result: ReplayResult = {};
  for (const message of messages) {
    const state = routingState(actor.getSnapshot());
    if (state === 'closed') break;
    if (message.role === 'user') {
      if (state === 'idle') actor.send({ type: 'USER_TURN' });
    } else if (message.role === 'assistant') {
      if (state === 'running' && (message.toolCalls?.length ?? 0) === 0) {
        actor.send({ type: 'REPLY' });
        result.lastReply = message;
      }
    } else if (message.role === 'tool') {
      if (state === 'awaitingRequest') actor.send({ type: 'RESUME' });
      const control = storedControl(message);
      if (control?.kind === 'handoff' && control.target !== undefined) actor.send({ type: 'HANDOFF', target: control.target });
      if (control?.kind === 'end_conversation') result.endConversation = control.reason ?? 'ended by agent';
    }
  }
  return result;
}
