import { type BatonEvent, emptyUsage, MAIN_BRANCH, type Message, NotFoundError } from '@baton/core';
import { createActor } from 'xstate';
import { applyRoutingEffect, storedControl } from '../routing/replayHistory.js';
import { type RoutingMachine, type RoutingStateValue, routingState } from '../routing/routingMachine.js';
import type { HandoffConfig } from '../config/handoffTypes.js';
import { WorkflowExecutor } from '../workflow/workflowExecutor.js';

/** What {@link replaySession} rebuilds from a stored session. */
export interface SessionReplay {
  sessionId: string;
  branchId: string;
  /** The branch's stored history, oldest first (fork parents included). */
  messages: readonly Message[];
  /**
   * The events a live run emitted for these messages, rebuilt in order: `turn.started`,
   * `agent.started`, `message`, `tool.call`, `tool.result`, `handoff`, `turn.completed` (usage zero: it
   * is not stored) and `session.closed`. A nested workflow's participant (`workflow.asExecutor()`)
   * gets what it emitted live too: its own `agent.started`, then its inner agents' `agent.started`
   * and the inner handoffs. Not rebuilt: `message.delta` (only whole messages are stored),
   * `model.started`/`model.completed` (model calls are not stored),
   * `checkpoint`, `request` and `error` events (requests and refusals live in checkpoints and in the
   * stream, not in the history; an answered request shows as its tool result).
   */
  events: readonly BatonEvent[];
  /** The routing machine after every message: its state, the agent that acts next, the turn count. */
  routing: { state: RoutingStateValue; activeAgent: string; turn: number };
}

/**
 * Rebuilds the routing state and the event sequence of a stored session from its messages alone —
 * no model and no tool is called, nothing is written — so a stored conversation can be audited or
 * re-rendered (for example a transcript view of a closed support chat). The routing machine is the
 * workflow's own, replayed with the same rule that loads sessions (`applyRoutingEffect`).
 *
 * @param workflow the workflow that ran the session (its store, routing graph and return policy)
 * @param options `{ branch?, tenantId? }` (default branch `'main'`)
 * @throws {NotFoundError} when the session or branch does not exist
 * @example
 * ```ts
 * const { events, routing } = await replaySession(desk, 'chat-81');
 * for (const event of events) if (event.type === 'handoff') console.log(`${event.from} → ${event.to}`);
 * ```
 */
export async function replaySession(
  workflow: { config: HandoffConfig; machine: RoutingMachine },
  sessionId: string,
  options: { branch?: string; tenantId?: string } = {},
): Promise<SessionReplay> {
  const { store } = workflow.config;
  const branchId = options.branch ?? MAIN_BRANCH;
  const scope = options.tenantId === undefined ? {} : { tenantId: options.tenantId };
  const session = await store.getSession(sessionId, scope);
  if (session === undefined) throw new NotFoundError(`Session ${JSON.stringify(sessionId)} does not exist.`);
  if ((await store.getBranch(sessionId, branchId, scope)) === undefined) {
    throw new NotFoundError(
      `Branch ${JSON.stringify(branchId)} of session ${JSON.stringify(sessionId)} does not exist.`,
    );
  }
  const messages = await store.readMessages(sessionId, branchId, scope);
  const actor = createActor(workflow.machine).start();
  const base = { sessionId, branchId };
  const events: BatonEvent[] = [];
  const outerOf = nestedAgents(workflow.config);
  // The participant of the outer workflow that acts, and the agent (inner, for a nested workflow) whose `agent.started` was last emitted.
  let participant: string | undefined;
  let speaking: string | undefined;
  for (let i = 0; i < messages.length; i += 1) {
    const message = messages[i]!;
    const before = actor.getSnapshot();
    if (message.role === 'user' && routingState(before) === 'idle') {
      applyRoutingEffect(actor, message);
      events.push({ type: 'turn.started', ...base, turn: actor.getSnapshot().context.turn });
      events.push({ type: 'message', ...base, message });
      participant = undefined;
      speaking = undefined;
      continue;
    }
    if (message.role === 'tool') {
      // One step's results: live, each tool.result is announced as it finishes, then the results are committed together.
      let end = i;
      while (messages[end + 1]?.role === 'tool') end += 1;
      const step = messages.slice(i, end + 1);
      for (const result of step) events.push(toolResultEvent(base, result));
      for (const result of step) {
        const from = actor.getSnapshot().context.activeAgent;
        applyRoutingEffect(actor, result);
        events.push({ type: 'message', ...base, message: result });
        const control = storedControl(result);
        const to = actor.getSnapshot().context.activeAgent;
        // An outer handoff moves the outer machine; an inner one (a nested workflow's agents) leaves it where it is.
        const inner =
          control?.kind === 'handoff' &&
          to === from &&
          control.target !== undefined &&
          outerOf.get(control.target) === from;
        if (control?.kind === 'handoff' && (to !== from || inner)) {
          const reason = control.reason ?? handoffReason(messages, result.toolCallId);
          const [handoffFrom, handoffTo] = inner ? [result.agent ?? from, control.target!] : [from, to];
          events.push(
            reason === undefined
              ? { type: 'handoff', ...base, from: handoffFrom, to: handoffTo }
              : { type: 'handoff', ...base, from: handoffFrom, to: handoffTo, reason },
          );
        }
      }
      i = end;
      continue;
    }
    if (message.role === 'assistant' && message.agent !== undefined) {
      const outer = outerOf.get(message.agent) ?? message.agent;
      if (outer !== participant && outer !== message.agent)
        events.push({ type: 'agent.started', ...base, agent: outer });
      participant = outer;
      if (message.agent !== speaking) events.push({ type: 'agent.started', ...base, agent: message.agent });
      speaking = message.agent;
    }
    const effect = applyRoutingEffect(actor, message);
    events.push({ type: 'message', ...base, message });
    for (const call of message.toolCalls ?? [])
      events.push({ type: 'tool.call', ...base, agent: message.agent ?? '', toolCall: call });
    const after = actor.getSnapshot();
    if (effect === 'reply')
      events.push({
        type: 'turn.completed',
        ...base,
        turn: after.context.turn,
        usage: emptyUsage(),
        nextAgent: after.context.activeAgent,
      });
  }
  if (session.status === 'closed')
    events.push({ type: 'session.closed', ...base, reason: session.closedReason ?? 'closed' });
  const { context } = actor.getSnapshot();
  const routing = { state: routingState(actor.getSnapshot()), activeAgent: context.activeAgent, turn: context.turn };
  actor.stop();
  return { sessionId, branchId, messages, events, routing };
}

/** Each inner agent of a nested workflow (`asExecutor()`) → the participant's name in this workflow. */
function nestedAgents(config: HandoffConfig): ReadonlyMap<string, string> {
  const outerOf = new Map<string, string>();
  for (const [name, executor] of config.participants) {
    if (executor instanceof WorkflowExecutor) for (const agent of executor.innerParticipants) outerOf.set(agent, name);
  }
  return outerOf;
}

function toolResultEvent(base: { sessionId: string; branchId: string }, message: Message): BatonEvent {
  return {
    type: 'tool.result',
    ...base,
    agent: message.agent ?? '',
    toolCallId: message.toolCallId ?? '',
    toolName: message.toolName ?? '',
    content: message.content,
    isError: message.isError ?? false,
    durationMs: message.durationMs ?? 0,
  };
}

/** The `reason` argument of the handoff call `toolCallId`, if it had one. */
function handoffReason(messages: readonly Message[], toolCallId: string | undefined): string | undefined {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const call = messages[i]!.toolCalls?.find((c) => c.id === toolCallId);
    if (call === undefined) continue;
    try {
      const reason = (JSON.parse(call.arguments) as { reason?: unknown }).reason;
      return typeof reason === 'string' && reason !== '' ? reason : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
