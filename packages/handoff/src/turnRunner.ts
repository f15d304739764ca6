import {
  addUsage,
  BatonError,
  type BatonEvent,
  createId,
  emptyUsage,
  type ExecutorInput,
  type ExecutorOutcome,
  type Message,
  type ModelMessage,
  type NewRequest,
  type PendingWrite,
  type Request,
  type Usage,
} from '@baton/core';
import { saveCheckpoint, pruneCheckpoints } from './checkpointer.js';
import { closeSession } from './closeSession.js';
import { flushAfterFailure } from './flushMessages.js';
import type { RequestAnswer } from './handoffTypes.js';
import { isHandoffToolName } from './handoffTools.js';
import { REQUEST_USER_INPUT } from './requestUserInput.js';
import { handoffRefusal } from './routingMachine.js';
import type { SessionRuntime } from './sessionRuntime.js';
import { settleTurn } from './settleTurn.js';
import { StoreJournal } from './storeJournal.js';

/** How a turn starts: a user message, an answer to a pending request, or the resumption of an interrupted turn. */
export type TurnStart =
  | { kind: 'message'; text: string }
  | { kind: 'answer'; request: Request; answer: RequestAnswer }
  | { kind: 'resume' };

/** The default text of the user message that starts an autonomous turn. */
export const DEFAULT_AUTONOMOUS_PROMPT = 'The user is not available. Continue with the task on your own, or hand off to the agent who can.';

/**
 * Runs one turn (or, in autonomous mode, several) on a loaded runtime: the active agent runs, handoffs
 * move control through the routing machine, until an agent answers the user, the turn pauses on
 * requests, or the conversation ends. It ends with `turn.completed`; everything before it is durable
 * (messages are written behind, in one append per durability point: see flushMessages.ts).
 * A failure is announced as a fatal `error` event after what the turn committed is stored, marks
 * the runtime for a reload on the next call, and is thrown. The caller holds the session's lock.
 */
export async function* runTurn(runtime: SessionRuntime, start: TurnStart, signal: AbortSignal): AsyncGenerator<BatonEvent, void> {
  /** Whether the current turn reached `turn.completed` (a turn left before it is unfinished). */
  let ended = false;
  const complete = (usage: Usage): BatonEvent => {
    ended = true;
    return completed(runtime, usage);
  };
  try {
    const base = { sessionId: runtime.sessionId, branchId: runtime.branchId };
    const journal = new StoreJournal(runtime);
    let usage: Usage = emptyUsage();
    let approvals: ExecutorInput['approvals'];
    let turnsRun = 1;

    if (start.kind === 'message') {
      runtime.actor.send({ type: 'USER_TURN' });
      yield { type: 'turn.started', ...base, turn: runtime.snapshot.context.turn };
      const message = await commitUserMessage(journal, start.text, undefined);
      while (runtime.queue.length > 0) yield runtime.queue.shift()!;
      yield { type: 'message', ...base, message };
    } else {
      yield { type: 'turn.started', ...base, turn: runtime.snapshot.context.turn };
      if (start.kind === 'answer') {
        const { request, answer } = start;
        runtime.pendingRequests = runtime.pendingRequests.filter((r) => r.id !== request.id);
        if (request.type === 'user_input') {
          const write = answerWrite(request, String(answer));
          await journal.recordPendingWrite(write);
          yield { type: 'tool.result', ...base, agent: write.agent, toolCallId: write.toolCallId, toolName: write.toolName, content: write.content, isError: false, durationMs: 0 };
          if (runtime.pendingRequests.length > 0) {
            while (runtime.queue.length > 0) yield runtime.queue.shift()!;
            yield complete(usage);
            return;
          }
        } else {
          approvals = new Map([[request.toolCallId, answer as Exclude<RequestAnswer, string>]]);
        }
        runtime.actor.send({ type: 'RESUME' });
      }
    }
    // What the user said last: the new message, or the answer to a user_input request (what memory recalls by).
    const said = start.kind === 'message' ? start.text : start.kind === 'answer' && start.request.type === 'user_input' ? String(start.answer) : undefined;
    let context = await beforeTurn(runtime, signal, said);

    for (;;) {
      const agent = runtime.snapshot.context.activeAgent;
      const executor = runtime.config.participants.get(agent)!;
      yield { type: 'agent.started', ...base, agent };
      const input: ExecutorInput = {
        sessionId: runtime.sessionId,
        branchId: runtime.branchId,
        turn: runtime.snapshot.context.turn,
        history: runtime.history.forAgent(),
        tools: runtime.toolsFor(agent),
        journal,
        state: runtime.state,
        signal,
      };
      if (context !== undefined) input.context = context;
      if (approvals !== undefined) input.approvals = approvals;
      if (runtime.core.prepareModelInput !== undefined) input.prepareModelInput = runtime.core.prepareModelInput;
      approvals = undefined;
      // The executor's events, each followed by the events queued meanwhile (inlined: one generator layer less per event).
      const run = executor.execute(input);
      let outcome: ExecutorOutcome;
      let finished = false;
      try {
        for (;;) {
          const next = await run.next();
          if (next.done) {
            finished = true;
            outcome = next.value;
            break;
          }
          const event = next.value;
          yield event;
          if (runtime.queue.length === 0 && event.type !== 'tool.result') continue;
          if (event.type === 'tool.result') noteRefusedHandoff(runtime, event, agent);
          while (runtime.queue.length > 0) yield runtime.queue.shift()!;
        }
      } finally {
        if (!finished) await run.return(undefined as never).catch(() => undefined);
      }
      while (runtime.queue.length > 0) yield runtime.queue.shift()!;
      usage = addUsage(usage, outcome.usage);

      if (outcome.type === 'handoff') {
        const before = runtime.snapshot;
        runtime.actor.send({ type: 'HANDOFF', target: outcome.target });
        if (runtime.snapshot !== before) {
          yield outcome.reason === undefined
            ? { type: 'handoff', ...base, from: agent, to: outcome.target }
            : { type: 'handoff', ...base, from: agent, to: outcome.target, reason: outcome.reason };
          continue;
        }
        const refusal = handoffRefusal(before, outcome.target, runtime.core.routing);
        yield { type: 'error', ...base, code: 'HANDOFF_REFUSED', message: `${agent} asked to hand off: ${refusal} The turn ends here.`, fatal: false };
        runtime.actor.send({ type: 'REPLY' });
        await settleTurn(runtime);
        while (runtime.queue.length > 0) yield runtime.queue.shift()!;
        yield complete(usage);
        return;
      }
      if (outcome.type === 'requests') {
        yield* pause(runtime, outcome.requests);
        yield complete(usage);
        return;
      }
      if (outcome.type === 'end_conversation') {
        await settleTurn(runtime);
        while (runtime.queue.length > 0) yield runtime.queue.shift()!;
        yield* closeSession(runtime, outcome.reason);
        yield complete(usage);
        return;
      }

      runtime.actor.send({ type: 'REPLY' });
      const closeReason = await terminationReason(runtime, outcome, agent);
      await settleTurn(runtime);
      while (runtime.queue.length > 0) yield runtime.queue.shift()!;
      if (closeReason !== undefined) {
        yield* closeSession(runtime, closeReason);
        yield complete(usage);
        return;
      }
      const autonomous = runtime.config.autonomous;
      if (autonomous === undefined || turnsRun >= autonomous.maxTurns) {
        yield complete(usage);
        return;
      }
      yield complete(usage);
      turnsRun += 1;
      usage = emptyUsage();
      ended = false;
      runtime.actor.send({ type: 'USER_TURN' });
      yield { type: 'turn.started', ...base, turn: runtime.snapshot.context.turn };
      const prompt = await commitUserMessage(journal, autonomous.prompt, { autonomous: true });
      while (runtime.queue.length > 0) yield runtime.queue.shift()!;
      yield { type: 'message', ...base, message: prompt };
      context = await beforeTurn(runtime, signal, autonomous.prompt);
    }
  } catch (error) {
    // A failure is announced as a fatal `error` event; the runtime reloads on the next call. What the
    // turn committed before it failed is stored first (a failed flush is not retried).
    await flushAfterFailure(runtime);
    runtime.stale = true;
    const code = error instanceof BatonError ? error.code : 'INTERNAL';
    const message = error instanceof Error ? error.message : String(error);
    yield { type: 'error', sessionId: runtime.sessionId, branchId: runtime.branchId, code, message, fatal: true };
    throw error;
  } finally {
    if (!ended) {
      // The caller stopped reading before the turn ended: keep what it committed, and let the next
      // call reload from the store, which finishes the turn if its user message was stored and
      // forgets it otherwise.
      await flushAfterFailure(runtime);
      runtime.stale = true;
    }
  }
}

async function commitUserMessage(journal: StoreJournal, text: string, metadata: Record<string, unknown> | undefined): Promise<Message> {
  const [message] = await journal.commit([metadata === undefined ? { role: 'user', content: text } : { role: 'user', content: text, metadata }]);
  return message!;
}

/** Queues a `HANDOFF_REFUSED` error when `agent` called a handoff tool it does not have (the model got an error result). */
function noteRefusedHandoff(runtime: SessionRuntime, event: Extract<BatonEvent, { type: 'tool.result' }>, agent: string): void {
  if (!event.isError || !isHandoffToolName(event.toolName) || runtime.toolsFor(agent).some((t) => t.name === event.toolName)) return;
  runtime.queue.push({
    type: 'error',
    sessionId: runtime.sessionId,
    branchId: runtime.branchId,
    code: 'HANDOFF_REFUSED',
    message: `${agent} called ${event.toolName}, which is not one of its handoffs; the model was answered with an error result.`,
    fatal: false,
  });
}

/** Pauses the turn on requests: keeps ids of requests already pending, checkpoints, announces new ones. */
async function* pause(runtime: SessionRuntime, raised: readonly NewRequest[]): AsyncGenerator<BatonEvent, void> {
  const known = new Map(runtime.pendingRequests.map((r) => [r.toolCallId, r]));
  const fresh: Request[] = [];
  const conversationRef = { branchId: runtime.branchId, throughSeq: runtime.history.headSeq };
  runtime.pendingRequests = raised.map((raw) => {
    const existing = known.get(raw.toolCallId);
    if (existing !== undefined) return existing;
    const request: Request = { ...raw, id: createId(), conversationRef, createdAt: new Date().toISOString() };
    fresh.push(request);
    return request;
  });
  runtime.actor.send({ type: 'REQUEST' });
  await saveCheckpoint(runtime);
  await pruneCheckpoints(runtime);
  while (runtime.queue.length > 0) yield runtime.queue.shift()!;
  for (const request of fresh) yield { type: 'request', sessionId: runtime.sessionId, branchId: runtime.branchId, request };
}

function answerWrite(request: Request, answer: string): PendingWrite {
  return {
    toolCallId: request.toolCallId,
    toolName: REQUEST_USER_INPUT,
    agent: request.agent,
    content: answer,
    isError: false,
    durationMs: 0,
    createdAt: new Date().toISOString(),
  };
}

/**
 * Context from every provider's `beforeTurn`, for the turn's model inputs (never stored). `said` is
 * what the user just said; without it (a resumed turn, an approval) the last user message is used.
 */
async function beforeTurn(runtime: SessionRuntime, signal: AbortSignal, said: string | undefined): Promise<readonly ModelMessage[] | undefined> {
  const providers = runtime.config.contextProviders;
  if (providers.length === 0) return undefined;
  let input = said ?? '';
  const messages = runtime.history.messages;
  for (let i = messages.length - 1; said === undefined && i >= 0; i -= 1) {
    if (messages[i]!.role === 'user') {
      input = messages[i]!.content;
      break;
    }
  }
  const context: ModelMessage[] = [];
  for (const provider of providers) {
    const found = await provider.beforeTurn?.({ session: runtime.session, branchId: runtime.branchId, input, store: runtime.config.store, signal });
    if (found !== undefined) context.push(...found);
  }
  return context.length > 0 ? context : undefined;
}

async function terminationReason(runtime: SessionRuntime, outcome: Extract<ExecutorOutcome, { type: 'reply' }>, agent: string): Promise<string | undefined> {
  const condition = runtime.config.terminateWhen;
  if (condition === undefined) return undefined;
  const verdict = await condition({
    session: runtime.session,
    branchId: runtime.branchId,
    message: outcome.message,
    messages: runtime.history.messages,
    turn: runtime.snapshot.context.turn,
    agent,
  });
  if (verdict === true) return 'termination condition';
  return typeof verdict === 'string' && verdict !== '' ? verdict : undefined;
}

function completed(runtime: SessionRuntime, usage: Usage): BatonEvent {
  const { context } = runtime.snapshot;
  return { type: 'turn.completed', sessionId: runtime.sessionId, branchId: runtime.branchId, turn: context.turn, usage, nextAgent: context.activeAgent };
}

