import type { HeldLease } from '@baton/core';
import type { RequestAnswer, SendOptions, TurnOptions } from '../config/handoffTypes.js';
import type { HandoffSession } from './handoffSession.js';
import type { TurnStream } from './turnStream.js';

/**
 * Where a session's operations run: the seam between a front end (`@baton/server`'s routes) and
 * what runs turns. {@link inProcessRunner}, the default, calls the opened session itself; another
 * runner sends the operation elsewhere (`@baton/temporal`'s `temporalRunner`: a session workflow
 * on a pool of workers) and relays the committed turn as a {@link TurnStream}. The caller opens the
 * session first (to check who may reach it and to read its state); a runner may use only its
 * identity (`id`, `branchId`, `info.tenantId`, `info.userId`) and what it knew when opened.
 *
 * Each method refuses a caller's mistake with the named errors `HandoffSession` throws
 * (`SessionClosedError`, `NotFoundError` for an unknown request, `InvalidInputError`), before the
 * stream's first event.
 *
 * @example
 * ```ts
 * const runner: SessionRunner = inProcessRunner;
 * const session = await desk.session({ id: 'chat-81' });
 * const turn = await runner.send(session, 'Where is order 1234?');
 * ```
 */
export interface SessionRunner {
  /** Sends the user's message(s): the turn's events, awaitable for its `TurnResult` (as `session.send`). */
  send(session: HandoffSession, text: string | readonly string[], options?: SendOptions & RunnerLease): TurnStream;
  /** Answers a pending request: the rest of the turn (as `session.respond`). */
  respond(
    session: HandoffSession,
    requestId: string,
    answer: RequestAnswer,
    options?: TurnOptions & RunnerLease,
  ): TurnStream;
  /** Closes the session (pending requests answered, the episode saved); closing twice is a no-op (as `session.close`). */
  close(session: HandoffSession, options?: { reason?: string }): Promise<void>;
}

/**
 * The branch lease the caller holds for the turn it starts through a runner (`@baton/server` takes
 * it before the turn): a runner whose turn runs in another process hands it on, so that process
 * works under the caller's lease instead of waiting for it. The in-process runner ignores it.
 * @example
 * ```ts
 * runner.send(session, 'hi', { lease: { owner: 'baton-7f3a', epoch: 12 } });
 * ```
 */
export interface RunnerLease {
  lease?: HeldLease;
}

/**
 * The default {@link SessionRunner}: runs each operation in this process, on the opened session.
 * @example
 * ```ts
 * for await (const event of inProcessRunner.send(session, 'hello')) console.log(event.type);
 * ```
 */
export const inProcessRunner: SessionRunner = {
  send: (session, text, { lease: _, ...options } = {}) => session.send(text, options),
  respond: (session, requestId, answer, { lease: _, ...options } = {}) => session.respond(requestId, answer, options),
  close: (session, options = {}) => session.close(options),
};
