import type { Message, PendingWrite } from '@baton/core';
import type { RoutingSender } from './routingDriver.js';
import { routingState } from './routingMachine.js';

/** What replaying committed messages through the routing machine found. */
export interface ReplayResult {
  /** The last answer to the user that ended a turn during the replay. */
  lastReply?: Message;
  /** Set when a tool result ended the conversation (`end_conversation`) during the replay. */
  endConversation?: string;
}

/** The control a stored tool result carries (`metadata.control`), if any. */
export function storedControl(message: Message): PendingWrite['control'] {
  const control = message.metadata?.control as PendingWrite['control'] | undefined;
  return control !== undefined && typeof control === 'object' && typeof control.kind === 'string' ? control : undefined;
}

/** The step id an operator's answer (an assistant message a `HumanExecutor` committed) carries in `metadata.humanStep`, if any. */
export function humanStepOf(message: Message): string | undefined {
  const step = message.role === 'assistant' ? message.metadata?.humanStep : undefined;
  return typeof step === 'string' ? step : undefined;
}

/** The `metadata.control` of the first tool result that `session.discard()` commits: the turn was given up. */
export const DISCARD_CONTROL = { kind: 'discard_turn' } as const;

/** Whether a stored tool result carries {@link DISCARD_CONTROL}. */
function isDiscardResult(message: Message): boolean {
  const control = message.metadata?.control as { kind?: unknown } | undefined;
  return typeof control === 'object' && control !== null && control.kind === DISCARD_CONTROL.kind;
}

/**
 * Applies the routing effect of one committed message to the routing machine. This is the only place
 * where committed history moves the machine, live and on load alike, so a checkpoint's machine is always
 * the machine after every message through its `throughSeq` (docs/architecture.md invariant 7):
 * - a user message starts a turn when the machine is idle;
 * - an assistant message without tool calls answers the user (`REPLY`) while an agent is running
 *   (an operator's answer to a `human_step` request, `metadata.humanStep`, resumes the paused step first);
 * - a tool result resumes a paused step (`RESUME`); one whose `metadata.control` is a handoff hands off
 *   (`HANDOFF`), one that ends the conversation closes the machine (`CLOSE`), one that discards the
 *   turn ends it without an answer (`DISCARD`).
 * Nothing happens once the machine is closed.
 *
 * @param actor a started routing actor (an XState actor of the routing machine, or the session runtime's {@link RoutingSender})
 * @returns the message when it answered the user (`'reply'`), the reason when it ended the
 *   conversation (`{ endConversation }`), else `undefined`
 */
export function applyRoutingEffect(
  actor: RoutingSender,
  message: Message,
): 'reply' | { endConversation: string } | undefined {
  const state = routingState(actor.getSnapshot());
  if (state === 'closed') return undefined;
  if (message.role === 'user') {
    if (state === 'idle') actor.send({ type: 'USER_TURN' });
    return undefined;
  }
  if (message.role === 'assistant') {
    // An operator's answer to a `human_step` request resumes the paused step it answers.
    if (state === 'awaitingRequest' && humanStepOf(message) !== undefined) actor.send({ type: 'RESUME' });
    if (routingState(actor.getSnapshot()) !== 'running' || (message.toolCalls?.length ?? 0) > 0) return undefined;
    actor.send({ type: 'REPLY' });
    return 'reply';
  }
  if (message.role !== 'tool') return undefined;
  if (state === 'awaitingRequest') actor.send({ type: 'RESUME' });
  if (isDiscardResult(message)) {
    actor.send({ type: 'DISCARD' });
    return undefined;
  }
  const control = storedControl(message);
  if (control?.kind === 'handoff' && control.target !== undefined)
    actor.send({ type: 'HANDOFF', target: control.target });
  if (control?.kind !== 'end_conversation') return undefined;
  actor.send({ type: 'CLOSE' });
  return { endConversation: control.reason ?? 'ended by agent' };
}

/**
 * Brings the routing machine up to date with messages committed after its snapshot (deterministic
 * replay, docs/architecture.md invariant 6), one {@link applyRoutingEffect} per message. Used when
 * loading a session whose newest checkpoint is older than its history (a crash mid-turn, `'manual'`
 * checkpoints, a fork).
 *
 * @param actor a started routing actor, at the state of the checkpoint (or initial)
 * @param messages the messages after the checkpoint's `throughSeq`, oldest first
 * @example
 * ```ts
 * const actor = createActor(machine, { snapshot: checkpoint.machine }).start();
 * replayHistory(actor, messages.filter((m) => m.seq > checkpoint.throughSeq));
 * ```
 */
export function replayHistory(actor: RoutingSender, messages: readonly Message[]): ReplayResult {
  const result: ReplayResult = {};
  for (const message of messages) {
    const effect = applyRoutingEffect(actor, message);
    if (effect === 'reply') result.lastReply = message;
    else if (effect !== undefined) result.endConversation = effect.endConversation;
  }
  return result;
}
