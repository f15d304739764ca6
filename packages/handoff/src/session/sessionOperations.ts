import {
  BatonError,
  type BatonEvent,
  InvalidInputError,
  NotFoundError,
  type Request,
  SessionClosedError,
} from '@baton/core';
import type { RequestAnswer } from '../config/handoffTypes.js';
import { routingState } from '../routing/routingMachine.js';
import { settleTurn } from '../runtime/checkpointer.js';
import type { SessionRuntime } from '../runtime/sessionRuntime.js';
import { tracedTurn } from '../telemetry/tracedTurn.js';
import { assertAlways } from '../turn/approvalGrants.js';
import { closeSession } from '../turn/closeSession.js';
import { runTurn } from '../turn/turnRunner.js';
import type { TurnCall, TurnStart } from '../turn/turnStart.js';
import type { SessionLock } from './sessionLock.js';
import { TurnStream } from './turnStream.js';

/**
 * Takes the session branch's lock for a call that yields events, reloads the runtime first when it
 * is stale (another session object or process wrote, or the last call failed), and settles a
 * finished turn whose state a load found unsaved (the events that settle raises go to `entered`).
 * The caller runs {@link sessionEvents} with the same `entered` and then calls the returned
 * function, which releases the lock (a `TurnStream` does both, so a turn's events pass through no
 * extra generator).
 *
 * @returns the function that releases the lock (call it once, when the events are done, failed or
 *   left): at once when the lock was free and the runtime needs no load or settle, else a promise of it
 * @throws what the load or the settle throws (the lock is released first)
 */
export function enterSession(
  runtime: SessionRuntime,
  locks: SessionLock,
  entered: BatonEvent[],
): Promise<() => void> | (() => void) {
  const key = `${runtime.sessionId}\u0000${runtime.branchId}`;
  // The usual case (the lock is free, the runtime current and settled) is entered at once, without a promise.
  if (!runtime.outdated && !runtime.unsettled.persistState) {
    const release = locks.tryAcquire(key);
    if (release !== undefined) return release;
  }
  return enterWaiting(runtime, locks, key, entered);
}

/** {@link enterSession} when the lock is held, or the runtime must load or settle first. */
async function enterWaiting(
  runtime: SessionRuntime,
  locks: SessionLock,
  key: string,
  entered: BatonEvent[],
): Promise<() => void> {
  const release = await locks.acquire(key);
  try {
    if (runtime.outdated) await runtime.load();
    if (runtime.unsettled.persistState) await settleLeftOver(runtime, entered);
    return release;
  } catch (error) {
    release();
    throw error;
  }
}

/** Settles the finished turn a load found unsaved, its events (the settle's checkpoint) into `entered`. */
async function settleLeftOver(runtime: SessionRuntime, entered: BatonEvent[]): Promise<void> {
  const stopListening = runtime.listen((event) => entered.push(event));
  try {
    await settleTurn(runtime);
  } finally {
    stopListening();
  }
}

/**
 * The events of `body` on a session entered with {@link enterSession}: first those of entering it
 * (`entered`), then the close of the conversation a load found ended by an agent but not applied
 * (rare), then `body`'s own.
 */
export function sessionEvents(
  runtime: SessionRuntime,
  body: () => AsyncGenerator<BatonEvent, void>,
  entered: BatonEvent[],
): AsyncGenerator<BatonEvent, void> {
  return runtime.unsettled.endConversation === undefined && entered.length === 0
    ? body()
    : leftOverThen(runtime, entered, body);
}

async function* leftOverThen(
  runtime: SessionRuntime,
  entered: BatonEvent[],
  body: () => AsyncGenerator<BatonEvent, void>,
): AsyncGenerator<BatonEvent, void> {
  yield* entered.splice(0);
  const reason = runtime.unsettled.endConversation;
  if (reason !== undefined) yield* guarded(runtime, closeSession(runtime, reason));
  yield* body();
}

/** Runs `body` holding the session branch's lock ({@link enterSession}, then {@link sessionEvents}), releasing it when `body` ends or is left. */
export async function* withSession(
  runtime: SessionRuntime,
  locks: SessionLock,
  body: () => AsyncGenerator<BatonEvent, void>,
): AsyncGenerator<BatonEvent, void> {
  const entered: BatonEvent[] = [];
  const release = await enterSession(runtime, locks, entered);
  try {
    yield* sessionEvents(runtime, body, entered);
  } finally {
    release();
  }
}

/**
 * A turn's stream: starts `body` under the session branch's lock on the first read or await
 * ({@link enterSession}, then {@link sessionEvents}; see {@link TurnStream}).
 */
export function lockedTurn(
  runtime: SessionRuntime,
  locks: SessionLock,
  body: () => AsyncGenerator<BatonEvent, void>,
): TurnStream {
  // Events raised while entering the session (settling a turn a load found unsaved) lead the stream.
  const entered: BatonEvent[] = [];
  return new TurnStream(
    { sessionId: runtime.sessionId, branchId: runtime.branchId },
    () => sessionEvents(runtime, body, entered),
    () => runtime.pendingRequests,
    () => enterSession(runtime, locks, entered),
  );
}

/**
 * Runs `work` holding the session branch's lock, reloading the runtime first when it is stale
 * (unless `load` is false: `restore` loads a chosen checkpoint itself).
 */
export async function withSessionLock<T>(
  runtime: SessionRuntime,
  locks: SessionLock,
  work: () => Promise<T>,
  options: { load?: boolean } = {},
): Promise<T> {
  const release = await locks.acquire(`${runtime.sessionId}\u0000${runtime.branchId}`);
  try {
    if (options.load !== false && runtime.outdated) await runtime.load();
    return await work();
  } finally {
    release();
  }
}

/** Runs a turn; a failure is announced as a fatal `error` event, the runtime reloads on the next call, and the error is thrown. */
export function turn(runtime: SessionRuntime, start: TurnStart, call: TurnCall): AsyncGenerator<BatonEvent, void> {
  if (start.kind === 'resume')
    runtime.config.logger.info(
      { sessionId: runtime.sessionId, branchId: runtime.branchId },
      'resuming an interrupted turn',
    );
  return tracedTurn(runtime, start.kind !== 'message', (sink) => runTurn(runtime, start, call, sink));
}

/** Like {@link turn}'s failure handling, for other work that yields events (closing a session on load). */
async function* guarded(
  runtime: SessionRuntime,
  run: AsyncGenerator<BatonEvent, void>,
): AsyncGenerator<BatonEvent, void> {
  try {
    yield* run;
  } catch (error) {
    runtime.markStale();
    const code = error instanceof BatonError ? error.code : 'INTERNAL';
    const message = error instanceof Error ? error.message : String(error);
    yield { type: 'error', sessionId: runtime.sessionId, branchId: runtime.branchId, code, message, fatal: true };
    throw error;
  }
}

/** Finishes a turn interrupted by a crash or a failure, if there is one (an empty stream when there is none). */
export function resumeUnfinished(runtime: SessionRuntime, call: TurnCall): AsyncGenerator<BatonEvent, void> {
  return routingState(runtime.snapshot) === 'running' ? turn(runtime, { kind: 'resume' }, call) : nothing();
}

async function* nothing(): AsyncGenerator<BatonEvent, void> {}

/** Throws {@link SessionClosedError} when the session is closed. */
export function assertOpen(runtime: SessionRuntime): void {
  if (runtime.session.status === 'closed' || routingState(runtime.snapshot) === 'closed') {
    throw new SessionClosedError(
      `Session ${JSON.stringify(runtime.sessionId)} is closed (${runtime.session.closedReason ?? 'closed'}); it accepts no more turns. Start a new session.`,
    );
  }
}

/**
 * What `send(text)` does: resumes an unfinished turn first; while requests are pending, answers the
 * only pending `user_input` request with `text`; otherwise starts a turn with a user message.
 *
 * @throws {InvalidInputError} when an approval (or several requests) is pending: use `respond`
 */
export function sendText(
  runtime: SessionRuntime,
  text: string | readonly string[],
  call: TurnCall,
  metadata?: Record<string, unknown>,
): AsyncGenerator<BatonEvent, void> {
  const texts = typeof text === 'string' ? [text] : text;
  if (!Array.isArray(texts) || texts.length === 0 || texts.some((t) => typeof t !== 'string')) {
    throw new InvalidInputError(
      `send() takes the user's text as a string (or a non-empty array of strings), not ${JSON.stringify(text)}.`,
    );
  }
  assertOpen(runtime);
  // Called by withSession inside the lock; the usual case returns the turn itself (no extra generator layer per event).
  if (routingState(runtime.snapshot) === 'running') return resumeThenSend(runtime, texts, call, metadata);
  return sendNow(runtime, texts, call, metadata);
}

async function* resumeThenSend(
  runtime: SessionRuntime,
  texts: readonly string[],
  call: TurnCall,
  metadata: Record<string, unknown> | undefined,
): AsyncGenerator<BatonEvent, void> {
  yield* resumeUnfinished(runtime, call);
  assertOpen(runtime);
  yield* sendNow(runtime, texts, call, metadata);
}

function sendNow(
  runtime: SessionRuntime,
  texts: readonly string[],
  call: TurnCall,
  metadata: Record<string, unknown> | undefined,
): AsyncGenerator<BatonEvent, void> {
  if (runtime.pendingRequests.length > 0) {
    const [only] = runtime.pendingRequests;
    if (runtime.pendingRequests.length === 1 && only?.type === 'user_input') {
      // The answer is the waiting call's tool result, which has no metadata to refer to assets by.
      if (metadata !== undefined)
        throw new InvalidInputError(
          `Session ${JSON.stringify(runtime.sessionId)} is waiting for an answer to "${only.prompt}"; send the answer first, then the assets with the next message.`,
        );
      return turn(runtime, { kind: 'answer', request: only, answer: texts.join('\n') }, call);
    }
    throw new InvalidInputError(
      `Session ${JSON.stringify(runtime.sessionId)} is waiting on ${describe(runtime.pendingRequests)}; answer with session.respond(requestId, answer) instead of send().`,
    );
  }
  return turn(
    runtime,
    metadata === undefined ? { kind: 'message', texts } : { kind: 'message', texts, metadata },
    call,
  );
}

/**
 * What `respond(requestId, answer)` does: validates the answer against the request's type and continues the turn.
 *
 * @throws {NotFoundError} when no pending request has this id
 * @throws {InvalidInputError} when the answer does not fit the request (text for `user_input`, `{ approved }` for
 *   `tool_approval`, `always: 'session'` only with `approved: true`)
 */
export function respondTo(
  runtime: SessionRuntime,
  requestId: string,
  answer: RequestAnswer,
  call: TurnCall,
): AsyncGenerator<BatonEvent, void> {
  assertOpen(runtime);
  const request = runtime.pendingRequests.find((r) => r.id === requestId);
  if (request === undefined) {
    const pending =
      runtime.pendingRequests.length === 0 ? 'none is pending' : `pending: ${describe(runtime.pendingRequests)}`;
    throw new NotFoundError(`No pending request has id ${JSON.stringify(requestId)} (${pending}).`);
  }
  if (request.type === 'user_input' && typeof answer !== 'string') {
    throw new InvalidInputError(
      `Request ${JSON.stringify(requestId)} asks the user for text ("${request.prompt}"); answer with a string, not ${JSON.stringify(answer)}.`,
    );
  }
  if (request.type === 'human_step' && !isHumanStepAnswer(answer)) {
    throw new InvalidInputError(
      `Request ${JSON.stringify(requestId)} waits for a human step of ${request.agent}; answer with the reply text, { reply } or { handoff, reason? }, not ${JSON.stringify(answer)}.`,
    );
  }
  if (
    request.type === 'tool_approval' &&
    (typeof answer !== 'object' || answer === null || !('approved' in answer) || typeof answer.approved !== 'boolean')
  ) {
    throw new InvalidInputError(
      `Request ${JSON.stringify(requestId)} asks for approval of ${request.toolName}; answer with { approved: true } or { approved: false, reason }, not ${JSON.stringify(answer)}.`,
    );
  }
  assertAlways(request, answer);
  if (
    request.type === 'tool_approval' &&
    typeof answer === 'object' &&
    'arguments' in answer &&
    answer.arguments !== undefined
  ) {
    return approveEdited(runtime, request, answer.arguments, answer.always, call);
  }
  return turn(runtime, { kind: 'answer', request, answer }, call);
}

/**
 * An approval with edited arguments: they must be a JSON object that passes the tool's schema
 * (checked by the participant, when it can) before the turn goes on; otherwise the request stays pending.
 * @throws {InvalidInputError} naming the problem
 */
async function* approveEdited(
  runtime: SessionRuntime,
  request: Extract<Request, { type: 'tool_approval' }>,
  args: unknown,
  always: 'session' | undefined,
  call: TurnCall,
): AsyncGenerator<BatonEvent, void> {
  if (args === null || typeof args !== 'object' || Array.isArray(args) || !isJsonValue(args)) {
    throw new InvalidInputError(
      `The edited arguments for ${request.toolName} (request ${JSON.stringify(request.id)}) must be a JSON object, not ${String(args)}.`,
    );
  }
  await runtime.config.participants
    .get(request.agent)
    ?.validateApprovedArguments?.(request.toolName, args as Record<string, unknown>);
  const answer: RequestAnswer = { approved: true, arguments: args as Record<string, unknown> };
  if (always !== undefined) answer.always = always;
  yield* turn(runtime, { kind: 'answer', request, answer }, call);
}

/** Whether `value` survives JSON as it is (plain objects, arrays, strings, finite numbers, booleans, null). */
function isJsonValue(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJsonValue);
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype)
    return Object.values(value).every(isJsonValue);
  return false;
}

function isHumanStepAnswer(answer: RequestAnswer): boolean {
  if (typeof answer === 'string') return true;
  if (typeof answer !== 'object' || answer === null) return false;
  return (
    ('reply' in answer && typeof answer.reply === 'string') ||
    ('handoff' in answer && typeof answer.handoff === 'string')
  );
}

function describe(requests: readonly Request[]): string {
  return requests
    .map(
      (r) =>
        `${r.type} request ${JSON.stringify(r.id)} from ${r.agent}${r.type === 'tool_approval' ? ` for ${r.toolName}` : ''}`,
    )
    .join(', ');
}
