import type { BatonEvent, ExecutorOutcome, NewRequest } from '@baton/core';
import { isHandoffToolName } from '../routing/handoffTools.js';
import { handoffRefusal, routingState } from '../routing/routingMachine.js';
import type { SessionRuntime } from '../runtime/sessionRuntime.js';

/** How the agents of a turn stopped: what the turn must do to end. */
export type TurnEnd =
  | { kind: 'reply'; outcome: Extract<ExecutorOutcome, { type: 'reply' }>; agent: string }
  | { kind: 'refused' }
  | { kind: 'pause'; requests: readonly NewRequest[] }
  | { kind: 'close'; reason: string };

/**
 * What follows one activation of `agent` that ended with `outcome`: the routing machine has already
 * applied what the agent committed (a handoff result hands off, an answer ends the turn:
 * {@link BufferedJournal.commit}); this announces it, and moves control itself for an executor that
 * reported a handoff without committing a handoff result (or refuses it, ending the turn).
 *
 * @returns `end` when the turn stops here (a reply, requests, the end of the conversation, a refused
 *   handoff: the caller then sends `REPLY` after emitting `event`); `event` to emit (the `handoff`,
 *   or the `HANDOFF_REFUSED` error)
 */
export function afterActivation(
  runtime: SessionRuntime,
  agent: string,
  outcome: ExecutorOutcome,
  handoffsBefore: number,
): { end?: TurnEnd; event?: BatonEvent } {
  const { sessionId, branchId } = runtime;
  if (outcome.type === 'requests') return { end: { kind: 'pause', requests: outcome.requests } };
  if (outcome.type === 'end_conversation') return { end: { kind: 'close', reason: outcome.reason } };
  if (outcome.type === 'reply') {
    if (routingState(runtime.snapshot) === 'running') runtime.actor.send({ type: 'REPLY' });
    return { end: { kind: 'reply', outcome, agent } };
  }
  // A handoff: applied by the commit of its result, or here for an executor that committed none.
  const handedOff = () => runtime.snapshot.context.handoffsThisTurn !== handoffsBefore;
  if (!handedOff()) runtime.actor.send({ type: 'HANDOFF', target: outcome.target });
  if (!handedOff()) {
    const refusal = handoffRefusal(runtime.snapshot, outcome.target, runtime.core.routing);
    return {
      end: { kind: 'refused' },
      event: {
        type: 'error',
        sessionId,
        branchId,
        code: 'HANDOFF_REFUSED',
        message: `${agent} asked to hand off: ${refusal} The turn ends here.`,
        fatal: false,
      },
    };
  }
  return {
    event:
      outcome.reason === undefined
        ? { type: 'handoff', sessionId, branchId, from: agent, to: outcome.target }
        : { type: 'handoff', sessionId, branchId, from: agent, to: outcome.target, reason: outcome.reason },
  };
}

/** A `HANDOFF_REFUSED` error when `agent` called a handoff tool it does not have (the model got an error result). */
export function refusedHandoff(
  runtime: SessionRuntime,
  event: Extract<BatonEvent, { type: 'tool.result' }>,
  agent: string,
): Extract<BatonEvent, { type: 'error' }> | undefined {
  if (
    !event.isError ||
    !isHandoffToolName(event.toolName) ||
    runtime.toolsFor(agent).some((t) => t.name === event.toolName)
  )
    return undefined;
  return {
    type: 'error',
    sessionId: runtime.sessionId,
    branchId: runtime.branchId,
    code: 'HANDOFF_REFUSED',
    message: `${agent} called ${event.toolName}, which is not one of its handoffs; the model was answered with an error result.`,
    fatal: false,
  };
}
