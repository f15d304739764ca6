import {
  type ApprovalDecision,
  addUsage,
  BatonError,
  type BatonEvent,
  ConcurrencyError,
  createId,
  type EventSink,
  type ExecutorInput,
  type ExecutorOutcome,
  emptyUsage,
  type Message,
  isReaderLeft,
  type ModelMessage,
  type NewRequest,
  type PendingWrite,
  type Request,
  requestKey,
  type Usage,
} from '@baton/core';
import { answeredRequest } from '../config/answeredRequest.js';
import { REQUEST_USER_INPUT } from '../routing/requestUserInput.js';
import { saveCheckpoint, settleTurn } from '../runtime/checkpointer.js';
import type { SessionRuntime } from '../runtime/sessionRuntime.js';
import { writeBufferedAfterFailure } from '../runtime/storeWriter.js';
// The one upward arrow between handoff's folders (docs/architecture.md): a nested workflow gets the whole branch.
import { WorkflowExecutor } from '../workflow/workflowExecutor.js';
import { activationInput, beforeActivation, beforeTurn } from './activationInput.js';
import { grantApproval, grantsAlways } from './approvalGrants.js';
import { afterActivation, refusedHandoff, type TurnEnd } from './activationOutcome.js';
import { BufferedJournal } from './bufferedJournal.js';
import { closeSession } from './closeSession.js';
import type { TurnCall, TurnStart } from './turnStart.js';
import { activate, emitAll, type TurnSink } from './turnSink.js';

export type { TurnCall, TurnStart } from './turnStart.js';
export type { TurnSink } from './turnSink.js';

/** The default text of the user message that starts an autonomous turn. */
export const DEFAULT_AUTONOMOUS_PROMPT =
  'The user is not available. Continue with the task on your own, or hand off to the agent who can.';

/**
 * Runs one turn (or, in autonomous mode, several) on a loaded runtime: the active agent runs, handoffs
 * move control through the routing machine, until an agent answers the user, the turn pauses on
 * requests, or the conversation ends. It ends with `turn.completed`; everything before it is durable
 * (messages are buffered by the {@link BufferedJournal} and stored by the runtime's writer, one
 * store write per durability point: see runtime/storeWriter.ts).
 * A failure is announced as a fatal `error` event after what the turn committed is stored, marks
 * the runtime for a reload on the next call, and is thrown. The caller holds the session's lock.
 *
 * This is the one place a turn's events come out, into `sink`: the steps of the turn
 * ({@link turnSteps}) and the executors (`Executor.run`, or their `execute` generator read here)
 * emit what they do, and events raised on the side (a `checkpoint` saved inside a commit, a
 * refused handoff inside a tool) wait in the turn's own queue (it listens to the runtime while it
 * runs) and are emitted before the next step event.
 * A reader that leaves (the sink throws, see `isReaderLeft`) ends the turn unfinished: what it
 * committed is stored and the next call reloads.
 */
export async function runTurn(
  runtime: SessionRuntime,
  start: TurnStart,
  call: TurnCall,
  sink: TurnSink,
): Promise<void> {
  /** Whether the current turn reached `turn.completed` (a turn left before it is unfinished). */
  let ended = false;
  const queue: BatonEvent[] = [];
  const stopListening = runtime.listen((event) => queue.push(event));
  const out = sink.emit;
  const emit: EventSink = (event) => {
    while (queue.length > 0) out(queue.shift()!);
    if (event.type === 'turn.completed') ended = true;
    else if (event.type === 'turn.started') ended = false;
    else if (event.type === 'error') logNonFatal(runtime, event);
    out(event);
    // The active agent is the one whose activation ran the tool (a handoff applies when its result is committed, later).
    const refused =
      event.type === 'tool.result' ? refusedHandoff(runtime, event, runtime.snapshot.context.activeAgent) : undefined;
    if (refused !== undefined) {
      logNonFatal(runtime, refused);
      out(refused);
    }
  };
  const steps: TurnSink =
    sink.within === undefined ? { emit, ready: sink.ready } : { emit, ready: sink.ready, within: sink.within };
  try {
    await turnSteps(runtime, start, call, steps);
    while (queue.length > 0) out(queue.shift()!);
  } catch (error) {
    if (isReaderLeft(error)) throw error;
    // What the turn committed before it failed is stored first (a failed write is not retried); the
    // runtime reloads on the next call.
    await writeBufferedAfterFailure(runtime);
    runtime.markStale();
    failTurn(runtime, error, out);
    throw error;
  } finally {
    stopListening();
    if (!ended) {
      // The caller stopped reading before the turn ended: keep what it committed, and let the next
      // call reload from the store, which finishes the turn if its user message was stored and
      // forgets it otherwise.
      await writeBufferedAfterFailure(runtime);
      runtime.markStale();
    }
  }
}

/** Logs a turn's failure and announces it as a fatal `error` event. */
function failTurn(runtime: SessionRuntime, error: unknown, out: EventSink): void {
  const code = error instanceof BatonError ? error.code : 'INTERNAL';
  const message = error instanceof Error ? error.message : String(error);
  runtime.config.logger[error instanceof ConcurrencyError ? 'warn' : 'error'](
    { sessionId: runtime.sessionId, branchId: runtime.branchId, code, err: error },
    'turn failed',
  );
  out({ type: 'error', sessionId: runtime.sessionId, branchId: runtime.branchId, code, message, fatal: true });
}

/** Logs a non-fatal `error` event (a refused handoff) at `warn`. */
function logNonFatal(runtime: SessionRuntime, event: Extract<BatonEvent, { type: 'error' }>): void {
  runtime.config.logger.warn(
    { sessionId: runtime.sessionId, branchId: runtime.branchId, code: event.code },
    event.message,
  );
}

/**
 * How a turn was opened: what the user said last (the new message, or the answer to a
 * `user_input` request: what memory recalls by), and the answers the first activation gets.
 * `undefined` when opening already ended the turn (other requests of the step still wait).
 */
interface OpenedTurn {
  said: string | undefined;
  approvals?: ExecutorInput['approvals'];
  humanAnswers?: ExecutorInput['humanAnswers'];
}

/** The steps of a turn, top to bottom: open it, run agents until one stops the turn, end it (and go on in autonomous mode). */
async function turnSteps(runtime: SessionRuntime, start: TurnStart, call: TurnCall, sink: TurnSink): Promise<void> {
  const journal = new BufferedJournal(runtime);
  // 1. Open the turn: a user message, an answer to a request, or the resumption of an interrupted turn.
  let opened = await openTurn(runtime, journal, start, sink);
  for (let turnsRun = 1; opened !== undefined; turnsRun += 1) {
    // 2. Run agents until one answers the user, pauses on requests, or ends the conversation.
    const { end, usage } = await runAgents(runtime, journal, call, opened, sink);
    // 3. End the turn: make it durable, then pause, close or return control to the user.
    const replied = await endTurn(runtime, end, usage, sink);
    // 4. Autonomous mode: the next turn starts without the user, up to its turn limit.
    const autonomous = runtime.config.autonomous;
    if (!replied || autonomous === undefined || turnsRun >= autonomous.maxTurns) return;
    await sink.ready();
    await openWithMessages(runtime, journal, [autonomous.prompt], { autonomous: true }, sink);
    opened = { said: autonomous.prompt };
  }
}

/** Opens the turn `start` asks for (step 1 of {@link turnSteps}). */
async function openTurn(
  runtime: SessionRuntime,
  journal: BufferedJournal,
  start: TurnStart,
  sink: TurnSink,
): Promise<OpenedTurn | undefined> {
  if (start.kind === 'message') {
    await openWithMessages(runtime, journal, start.texts, start.metadata, sink);
    return { said: start.texts.join('\n') };
  }
  sink.emit({
    type: 'turn.started',
    sessionId: runtime.sessionId,
    branchId: runtime.branchId,
    turn: runtime.snapshot.context.turn,
  });
  if (start.kind === 'resume') return { said: undefined };
  const opened = await answerRequest(runtime, journal, start.request, start.answer, sink);
  if (opened !== undefined) runtime.actor.send({ type: 'RESUME' });
  return opened;
}

/**
 * Applies the answer to a pending request that opens a turn: a `user_input` answer is the waiting
 * call's tool result (durable at once), a `human_step` answer and an approval go to the step's next
 * activation, an "always allow" approval is granted first.
 * @returns `undefined` when the step still waits on other requests (the turn stays paused and has completed)
 */
async function answerRequest(
  runtime: SessionRuntime,
  journal: BufferedJournal,
  request: Request,
  answer: Extract<TurnStart, { kind: 'answer' }>['answer'],
  sink: TurnSink,
): Promise<OpenedTurn | undefined> {
  runtime.dropRequests((r) => r.id === request.id);
  const answered = answeredRequest(request, answer);
  if (answered !== undefined) runtime.answeredRequests.set(requestKey(request), answered);
  if (request.type === 'human_step') {
    return {
      said: undefined,
      humanAnswers: new Map([
        [request.stepId, answer as string | { reply: string } | { handoff: string; reason?: string }],
      ]),
    };
  }
  if (request.type === 'tool_approval') {
    if (grantsAlways(answer)) {
      await sink.ready();
      await grantApproval(runtime, request);
    }
    return { said: undefined, approvals: new Map([[request.toolCallId, answer as ApprovalDecision]]) };
  }
  const write = answerWrite(request, String(answer));
  await sink.ready();
  await journal.recordPendingWrite(write);
  const { sessionId, branchId } = runtime;
  sink.emit({
    type: 'tool.result',
    sessionId,
    branchId,
    agent: write.agent,
    toolCallId: write.toolCallId,
    toolName: write.toolName,
    content: write.content,
    isError: false,
    durationMs: 0,
  });
  // Other requests of the same step still wait: the turn stays paused.
  if (runtime.pendingRequests.length > 0) {
    sink.emit(completed(runtime, emptyUsage()));
    return undefined;
  }
  return { said: write.content };
}

/** Runs agents until one stops the turn (step 2 of {@link turnSteps}): a reply, requests, the end of the conversation, a refused handoff. */
async function runAgents(
  runtime: SessionRuntime,
  journal: BufferedJournal,
  call: TurnCall,
  opened: OpenedTurn,
  sink: TurnSink,
): Promise<{ end: TurnEnd; usage: Usage }> {
  // (Inlined rather than a generator of its own: every agent event passes through one generator layer less.)
  let { approvals, humanAnswers } = opened;
  let context: readonly ModelMessage[] | undefined;
  // What providers search by: what the user said last (undefined without providers).
  let providerInput: string | undefined;
  if (runtime.config.contextProviders.length > 0) {
    await sink.ready();
    providerInput = opened.said ?? (await runtime.findLastMessage((m) => m.role === 'user'))?.content ?? '';
    context = await beforeTurn(runtime, call.signal, providerInput);
  }
  let usage: Usage = emptyUsage();
  for (;;) {
    const agent = runtime.snapshot.context.activeAgent;
    const handoffsBefore = runtime.snapshot.context.handoffsThisTurn;
    sink.emit({ type: 'agent.started', sessionId: runtime.sessionId, branchId: runtime.branchId, agent });
    const executor = runtime.config.participants.get(agent)!;
    // A nested workflow derives where it stands from the branch's messages (branchHistory): it gets the whole branch.
    if (executor instanceof WorkflowExecutor) await runtime.completeHistory();
    // The executor's events go straight through: runTurn's emit adds the HANDOFF_REFUSED error after a forbidden handoff call's result.
    const agentContext =
      providerInput === undefined
        ? context
        : await beforeActivation(runtime, call.signal, providerInput, agent, context, sink);
    const input = activationInput(runtime, journal, call, agent, agentContext, approvals, humanAnswers, sink);
    const outcome = await activate(executor, input, sink);
    approvals = undefined;
    humanAnswers = undefined;
    usage = addUsage(usage, outcome.usage);
    const after = afterActivation(runtime, agent, outcome, handoffsBefore);
    if (after.event !== undefined) sink.emit(after.event);
    if (after.end === undefined) continue;
    // A refused handoff ends the turn once it was announced.
    if (after.end.kind === 'refused') runtime.actor.send({ type: 'REPLY' });
    return { end: after.end, usage };
  }
}

/**
 * Ends the turn (step 3 of {@link turnSteps}): makes it durable (a pause's checkpoint, or the settle),
 * closes the session when the turn ended the conversation, and emits `turn.completed`.
 * @returns whether an agent answered the user and the session stays open (autonomous mode may go on)
 */
async function endTurn(runtime: SessionRuntime, end: TurnEnd, usage: Usage, sink: TurnSink): Promise<boolean> {
  // `ready()` gives a promise only when the turn must wait for its reader: awaited only then (hot: every turn).
  const ready = sink.ready();
  if (ready !== undefined) await ready;
  if (end.kind === 'pause') {
    await pause(runtime, end.requests, sink.emit);
    sink.emit(completed(runtime, usage));
    return false;
  }
  const closeReason =
    end.kind === 'close'
      ? end.reason
      : end.kind === 'reply' && runtime.config.terminateWhen !== undefined
        ? await terminationReason(runtime, end.outcome, end.agent)
        : undefined;
  await settleTurn(runtime);
  if (closeReason !== undefined) await emitAll(closeSession(runtime, closeReason), sink);
  sink.emit(completed(runtime, usage));
  return end.kind === 'reply' && closeReason === undefined;
}

/** Starts a turn with user messages: `turn.started`, then the messages, committed together. */
async function openWithMessages(
  runtime: SessionRuntime,
  journal: BufferedJournal,
  texts: readonly string[],
  metadata: Record<string, unknown> | undefined,
  sink: TurnSink,
): Promise<void> {
  const { sessionId, branchId } = runtime;
  runtime.actor.send({ type: 'USER_TURN' });
  // Event literals without `...base`: a spread followed by more keys is a slow path in V8 (hot: every turn).
  sink.emit({ type: 'turn.started', sessionId, branchId, turn: runtime.snapshot.context.turn });
  // `ready()` gives a promise only when the turn must wait for its reader: awaited only then (hot: every turn).
  const ready = sink.ready();
  if (ready !== undefined) await ready;
  const messages = await journal.commit(
    texts.map((text) =>
      metadata === undefined ? { role: 'user', content: text } : { role: 'user', content: text, metadata },
    ),
  );
  for (const message of messages) sink.emit({ type: 'message', sessionId, branchId, message });
}

/** Pauses the turn on requests: keeps ids of requests already pending, checkpoints, announces new ones. */
async function pause(runtime: SessionRuntime, raised: readonly NewRequest[], emit: EventSink): Promise<void> {
  const known = new Map(runtime.pendingRequests.map((r) => [requestKey(r), r]));
  const fresh: Request[] = [];
  const conversationRef = { branchId: runtime.branchId, throughSeq: runtime.history.headSeq };
  const requests = raised.map((raw) => {
    const existing = known.get(requestKey(raw));
    if (existing !== undefined) return existing;
    const request: Request = { ...raw, id: createId(), conversationRef, createdAt: new Date().toISOString() };
    fresh.push(request);
    return request;
  });
  runtime.awaitRequests(requests);
  await saveCheckpoint(runtime, {}, true); // a prune point: a due prune joins the write
  for (const request of fresh)
    emit({ type: 'request', sessionId: runtime.sessionId, branchId: runtime.branchId, request });
}

function answerWrite(request: Extract<Request, { type: 'user_input' }>, answer: string): PendingWrite {
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

async function terminationReason(
  runtime: SessionRuntime,
  outcome: Extract<ExecutorOutcome, { type: 'reply' }>,
  agent: string,
): Promise<string | undefined> {
  const condition = runtime.config.terminateWhen;
  if (condition === undefined) return undefined;
  const verdict = await condition({
    session: runtime.session,
    branchId: runtime.branchId,
    message: outcome.message,
    messages: await wholeHistory(runtime),
    turn: runtime.snapshot.context.turn,
    agent,
  });
  if (verdict === true) return 'termination condition';
  return typeof verdict === 'string' && verdict !== '' ? verdict : undefined;
}

/** The branch's whole history (read back first when the runtime holds only its newest part). */
async function wholeHistory(runtime: SessionRuntime): Promise<readonly Message[]> {
  await runtime.completeHistory();
  return runtime.history.messages;
}

function completed(runtime: SessionRuntime, usage: Usage): BatonEvent {
  const { context } = runtime.snapshot;
  return {
    type: 'turn.completed',
    sessionId: runtime.sessionId,
    branchId: runtime.branchId,
    turn: context.turn,
    usage,
    nextAgent: context.activeAgent,
  };
}
