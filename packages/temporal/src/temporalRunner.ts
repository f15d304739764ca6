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
 * requests and `turn.completed` or `session.closed` (`turn` is 0 in both: the worker's turn counter
 * is not sent back).
 *
 * A refusal reaches the caller before any event as the named error an in-process session throws
 * (`SessionClosedError`, `NotFoundError`, `InvalidInputError`), so the server answers 410/404/400 as
 * it does in-process; a turn that fails after it began ends its stream with a fatal `error` event.
 *
 * @throws {ConfigurationError} when `sessions` was made without `store`; {@link InvalidInputError} (from the stream) for a message with `assets`: the session workflow's Update carries text only
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
      return relayedTurn(session, pollMs, (chat) => {
        if ((sendOptions.assets?.length ?? 0) > 0) {
          throw new InvalidInputError(
            `Session ${JSON.stringify(session.id)} runs on Temporal workers, whose send Update carries text only; send the message without assets.`,
          );
        }
        return chat.send(typeof text === 'string' ? text : [...text], leaseOption(sendOptions.lease));
      });
    },
    respond(session, requestId, answer, respondOptions = {}) {
      return relayedTurn(session, pollMs, (chat) => chat.respond(requestId, answer, leaseOption(respondOptions.lease)));
    },
    async close(session, closeOptions = {}) {
      await sessions.session(targetOf(session)).close(closeOptions);
    },
  };

  function relayedTurn(
    session: HandoffSession,
    intervalMs: number,
    call: (chat: TemporalSession) => Promise<CommittedTurn>,
  ): TurnStream {
    const base = { sessionId: session.id, branchId: session.branchId };
    let pending = session.pendingRequests;
    const start = () =>
      relay(session, sessions.session(targetOf(session)), intervalMs, call, (turn) => {
        pending = turn.pendingRequests;
      });
    return new TurnStream(base, start, () => pending);
  }
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
        if (!yielded) yield { type: 'turn.started', ...base, turn: 0 };
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
  if (!yielded) yield { type: 'turn.started', ...base, turn: 0 };
  for (const message of turn.messages) if (message.seq > seenSeq) yield { type: 'message', ...base, message };
  for (const request of turn.pendingRequests) if (!before.has(request.id)) yield { type: 'request', ...base, request };
  if (turn.completed && !turn.closed)
    yield {
      type: 'turn.completed',
      ...base,
      turn: 0,
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
