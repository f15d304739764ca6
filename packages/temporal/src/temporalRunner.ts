import {
  type BatonEvent,
  ConfigurationError,
  type HeldLease,
  InvalidInputError,
  isBatonError,
  type MessageEvent,
  SessionClosedError,
  type SessionClosedEvent,
} from '@baton/core';
import { type HandoffSession, type SessionRunner, TurnStream } from '@baton/handoff';
import { ApplicationFailure } from '@temporalio/common';
import type { CommittedTurn, SessionTarget } from './sessionContract.js';
import type { TemporalSession } from './temporalSession.js';
import type { TemporalSessions } from './temporalSessions.js';

/** Options of {@link temporalRunner}. */
export interface TemporalRunnerOptions {
  /** How often the store is read for the turn's committed messages while it runs, in ms (default 100). */
  pollMs?: number;
}

/**
 * A `SessionRunner` whose turns run on Temporal workers: each operation is an Update of the
 * session's workflow (`TemporalSessions.session()`), so a worker killed mid-turn is replaced and the
 * caller still gets the turn. Give it to `createBatonApp({ workflow, runner })` and the HTTP API
 * serves sessions run on Temporal. `sessions` must be made with the `store` the workers write: while
 * the Update runs, the turn's committed messages are read from it and streamed as `message` events
 * (at the turn's durability points: no `message.delta`), after `turn.started` and before its new
 * requests and `turn.completed` or `session.closed`. Both carry the turn's number as an in-process
 * turn does: `turn.completed` the one the worker sends back (`CommittedTurn.turn`), `turn.started`
 * that one too when the result comes first, else the session's counter (the next turn for a
 * message, the paused one for an answer; the server holds the branch's lease, so it is current).
 * A message's `assets` travel with the send Update and are stored as in-process.
 *
 * A refusal reaches the caller before any event as the named error an in-process session throws
 * (`SessionClosedError`, `NotFoundError`, `InvalidInputError`), so the server answers 410/404/400 as
 * it does in-process; a turn that fails after it began ends its stream with a fatal `error` event.
 *
 * @throws {ConfigurationError} when `sessions` was made without `store`; {@link InvalidInputError} (from the stream) for `assets` that are not asset references of the session
 * @example
 * ```ts
 * const sessions = new TemporalSessions({ client, taskQueue: 'desk', store });
 * const app = createBatonApp({ workflow: desk, runner: temporalRunner(sessions) });
 * ```
 */
export function temporalRunner(sessions: TemporalSessions, options: TemporalRunnerOptions = {}): SessionRunner {
  if (sessions.store === undefined) {
    throw new ConfigurationError(
      "temporalRunner(sessions) streams each turn's committed messages from the store: make sessions with new TemporalSessions({ client, taskQueue, store }), the store the workers write.",
    );
  }
  const pollMs = options.pollMs ?? 100;
  return {
    send(session, text, sendOptions = {}) {
      const { assets, lease } = sendOptions;
      return relayedTurn(session, pollMs, startedTurn(session), (chat) =>
        chat.send(typeof text === 'string' ? text : [...text], {
          ...leaseOption(lease),
          ...(assets === undefined ? {} : { assets }),
        }),
      );
    },
    respond(session, requestId, answer, respondOptions = {}) {
      return relayedTurn(session, pollMs, session.turn, (chat) =>
        chat.respond(requestId, answer, leaseOption(respondOptions.lease)),
      );
    },
    async close(session, closeOptions = {}) {
      await sessions.session(targetOf(session)).close(closeOptions);
    },
  };

  function relayedTurn(
    session: HandoffSession,
    intervalMs: number,
    expectedTurn: number,
    call: (chat: TemporalSession) => Promise<CommittedTurn>,
  ): TurnStream {
    const base = { sessionId: session.id, branchId: session.branchId };
    let pending = session.pendingRequests;
    const start = () =>
      relay(session, sessions.session(targetOf(session)), intervalMs, expectedTurn, call, (turn) => {
        pending = turn.pendingRequests;
      });
    return new TurnStream(base, start, () => pending);
  }
}

/**
 * The number of the turn a send starts, as the session (opened by the server under the branch's
 * lease, so current) counts: the next one, or the paused one when the text answers a `user_input` request.
 */
function startedTurn(session: HandoffSession): number {
  const [only, ...more] = session.pendingRequests;
  return only?.type === 'user_input' && more.length === 0 ? session.turn : session.turn + 1;
}

/** The server's lease on the branch, handed to the worker that runs the turn (it would refuse the worker's own). */
function leaseOption(lease: HeldLease | undefined): { lease?: HeldLease } {
  return lease === undefined ? {} : { lease };
}

/** The conversation branch a server-opened session is, as the session workflow names it. */
function targetOf(session: HandoffSession): SessionTarget {
  const { tenantId, userId } = session.info;
  return {
    sessionId: session.id,
    branch: session.branchId,
    ...(tenantId === undefined ? {} : { tenantId }),
    ...(userId === undefined ? {} : { userId }),
  };
}

type Committed = IteratorResult<MessageEvent | SessionClosedEvent, void>;

/**
 * The events of one Update: committed messages as the store shows them while it runs, then what
 * the committed result adds (messages not seen yet, new requests, the end).
 */
async function* relay(
  session: HandoffSession,
  chat: TemporalSession,
  intervalMs: number,
  expectedTurn: number,
  call: (chat: TemporalSession) => Promise<CommittedTurn>,
  settled: (turn: CommittedTurn) => void,
): AsyncGenerator<BatonEvent, void> {
  const base = { sessionId: session.id, branchId: session.branchId };
  if (session.info.status === 'closed') {
    throw new SessionClosedError(
      `Session ${JSON.stringify(session.id)} is closed; it accepts no more turns. Start a new session.`,
    );
  }
  let seenSeq = session.messages.at(-1)?.seq ?? 0;
  const before = new Set(session.pendingRequests.map((r) => r.id));
  const outcome = Promise.resolve()
    .then(() => call(chat))
    .then(
      (turn) => ({ turn }) as const,
      (error: unknown) => ({ error }) as const,
    );
  const reading = new AbortController();
  const committed = chat.events({ afterSeq: seenSeq, signal: reading.signal, intervalMs });
  let closedEvent: SessionClosedEvent | undefined;
  let yielded = false;
  try {
    for (;;) {
      const next = committed.next();
      next.catch(() => undefined); // read below, or dropped once the Update settled
      const step = await Promise.race([next, outcome]);
      if (!('done' in step)) break;
      const read = step as Committed;
      if (read.done === true) break;
      if (read.value.type === 'session.closed') closedEvent = read.value;
      else {
        // Messages before the Update's result: the number the session's counter gives (see startedTurn).
        if (!yielded) yield { type: 'turn.started', ...base, turn: expectedTurn };
        seenSeq = read.value.message.seq;
        yielded = true;
        yield read.value;
      }
    }
  } finally {
    reading.abort();
  }
  const result = await outcome;
  if ('error' in result) {
    if (!yielded) throw result.error;
    const { code, message } = describeFailure(result.error);
    yield { type: 'error', ...base, code, message, fatal: true };
    throw result.error;
  }
  const { turn } = result;
  settled(turn);
  if (!yielded) yield { type: 'turn.started', ...base, turn: turn.turn };
  for (const message of turn.messages) if (message.seq > seenSeq) yield { type: 'message', ...base, message };
  for (const request of turn.pendingRequests) if (!before.has(request.id)) yield { type: 'request', ...base, request };
  if (turn.completed && !turn.closed)
    yield {
      type: 'turn.completed',
      ...base,
      turn: turn.turn,
      usage: turn.usage,
      nextAgent: turn.nextAgent ?? session.activeAgent,
    };
  if (turn.closed) yield closedEvent ?? { type: 'session.closed', ...base, reason: 'closed' };
}

/** The code and message of a failed Update, as the fatal `error` event tells them. */
function describeFailure(error: unknown): { code: string; message: string } {
  if (isBatonError(error)) return { code: error.code, message: error.message };
  const cause = error instanceof Error ? error.cause : undefined;
  if (cause instanceof ApplicationFailure) return { code: cause.type ?? 'TURN_FAILED', message: cause.message };
  return { code: 'TURN_FAILED', message: error instanceof Error ? error.message : String(error) };
}
