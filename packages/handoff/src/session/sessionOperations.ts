import { type BatonEvent, BatonError, InvalidInputError, NotFoundError, type Request, SessionClosedError } from '@baton/core';
import { closeSession } from './closeSession.js';
import type { RequestAnswer } from '../workflow/handoffTypes.js';
import { routingState } from '../routing/routingMachine.js';
import type { SessionLock } from './sessionLock.js';
import type { SessionRuntime } from './sessionRuntime.js';
import { settleTurn } from '../turn/settleTurn.js';
import { runTurn, type TurnCall, type TurnStart } from '../turn/turnRunner.js';

/**
 * Runs `body` holding the session branch's lock: reloads the runtime first when it is stale (another
 * session object or process wrote, or the last call failed), and finishes work a load found left
 * over (a finished turn whose state is unsaved, an `end_conversation` not yet applied).
 */
export async function* withSession(runtime: SessionRuntime, locks: SessionLock, body: () => AsyncGenerator<BatonEvent, void>): AsyncGenerator<BatonEvent, void> {
  const release = await locks.acquire(`${runtime.sessionId}\u0000${runtime.branchId}`);
  try {
    if (runtime.outdated) await runtime.load();
    if (runtime.unsettled.persistState) await settleTurn(runtime);
    if (runtime.unsettled.endConversation !== undefined) yield* guarded(runtime, closeSession(runtime, runtime.unsettled.endConversation));
    yield* body();
  } finally {
    release();
  }
}

/**
 * Runs `work` holding the session branch's lock, reloading the runtime first when it is stale
 * (unless `load` is false: `restore` loads a chosen checkpoint itself).
 */
export async function withSessionLock<T>(runtime: SessionRuntime, locks: SessionLock, work: () => Promise<T>, options: { load?: boolean } = {}): Promise<T> {
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
  return runTurn(runtime, start, call);
}

/** Like {@link turn}'s failure handling, for other work that yields events (closing a session on load). */
async function* guarded(runtime: SessionRuntime, run: AsyncGenerator<BatonEvent, void>): AsyncGenerator<BatonEvent, void> {
  try {
    yield* run;
  } catch (error) {
    runtime.stale = true;
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
export function sendText(runtime: SessionRuntime, text: string | readonly string[], call: TurnCall): AsyncGenerator<BatonEvent, void> {
  const texts = typeof text === 'string' ? [text] : text;
  if (!Array.isArray(texts) || texts.length === 0 || texts.some((t) => typeof t !== 'string')) {
    throw new InvalidInputError(`send() takes the user's text as a string (or a non-empty array of strings), not ${JSON.stringify(text)}.`);
  }
  assertOpen(runtime);
  // Called by withSession inside the lock; the usual case returns the turn itself (no extra generator layer per event).
  if (routingState(runtime.snapshot) === 'running') return resumeThenSend(runtime, texts, call);
  return sendNow(runtime, texts, call);
}

async function* resumeThenSend(runtime: SessionRuntime, texts: readonly string[], call: TurnCall): AsyncGenerator<BatonEvent, void> {
  yield* resumeUnfinished(runtime, call);
  assertOpen(runtime);
  yield* sendNow(runtime, texts, call);
}

function sendNow(runtime: SessionRuntime, texts: readonly string[], call: TurnCall): AsyncGenerator<BatonEvent, void> {
  if (runtime.pendingRequests.length > 0) {
    const [only] = runtime.pendingRequests;
    if (runtime.pendingRequests.length === 1 && only?.type === 'user_input') return turn(runtime, { kind: 'answer', request: only, answer: texts.join('\n') }, call);
    throw new InvalidInputError(
      `Session ${JSON.stringify(runtime.sessionId)} is waiting on ${describe(runtime.pendingRequests)}; answer with session.respond(requestId, answer) instead of send().`,
    );
  }
  return turn(runtime, { kind: 'message', texts }, call);
}

/**
 * What `respond(requestId, answer)` does: validates the answer against the request's type and continues the turn.
 *
 * @throws {NotFoundError} when no pending request has this id
 * @throws {InvalidInputError} when the answer does not fit the request (text for `user_input`, `{ approved }` for `tool_approval`)
 */
export function respondTo(runtime: SessionRuntime, requestId: string, answer: RequestAnswer, call: TurnCall): AsyncGenerator<BatonEvent, void> {
  assertOpen(runtime);
  const request = runtime.pendingRequests.find((r) => r.id === requestId);
  if (request === undefined) {
    const pending = runtime.pendingRequests.length === 0 ? 'none is pending' : `pending: ${describe(runtime.pendingRequests)}`;
    throw new NotFoundError(`No pending request has id ${JSON.stringify(requestId)} (${pending}).`);
  }
  if (request.type === 'user_input' && typeof answer !== 'string') {
    throw new InvalidInputError(`Request ${JSON.stringify(requestId)} asks the user for text ("${request.prompt}"); answer with a string, not ${JSON.stringify(answer)}.`);
  }
  if (request.type === 'human_step' && !isHumanStepAnswer(answer)) {
    throw new InvalidInputError(
      `Request ${JSON.stringify(requestId)} waits for a human step of ${request.agent}; answer with the reply text, { reply } or { handoff, reason? }, not ${JSON.stringify(answer)}.`,
    );
  }
  if (request.type === 'tool_approval' && (typeof answer !== 'object' || answer === null || !('approved' in answer) || typeof answer.approved !== 'boolean')) {
    throw new InvalidInputError(
      `Request ${JSON.stringify(requestId)} asks for approval of ${request.toolName}; answer with { approved: true } or { approved: false, reason }, not ${JSON.stringify(answer)}.`,
    );
  }
  return turn(runtime, { kind: 'answer', request, answer }, call);
}

function isHumanStepAnswer(answer: RequestAnswer): boolean {
  if (typeof answer === 'string') return true;
  if (typeof answer !== 'object' || answer === null) return false;
  return ('reply' in answer && typeof answer.reply === 'string') || ('handoff' in answer && typeof answer.handoff === 'string');
}

function describe(requests: readonly Request[]): string {
  return requests.map((r) => `${r.type} request ${JSON.stringify(r.id)} from ${r.agent}${r.type === 'tool_approval' ? ` for ${r.toolName}` : ''}`).join(', ');
}
