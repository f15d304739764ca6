import { BatonError, emptyUsage, type Usage } from '@baton/core';
import type { HandoffSession, HandoffWorkflow, TurnStream } from '@baton/handoff';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { committedTurn, headSeqOf } from './committedTurn.js';
import {
  type CommittedTurn,
  type OpenedSession,
  type SessionTarget,
  TURN_FAILED,
  type TurnActivityInput,
} from './sessionContract.js';

/** The activities a Baton worker registers (see `createBatonWorker`). */
export interface TurnActivities {
  /** Opens (or creates) the session and reports its head seq, status and pending requests. */
  batonOpenSession(target: SessionTarget): Promise<OpenedSession>;
  /** Runs one operation (a message, an answer, the close) and returns its committed result. */
  batonTurn(input: TurnActivityInput): Promise<CommittedTurn>;
}

/**
 * Error codes after which the same operation fails the same way: the activity is not retried and
 * the Update fails at once with the error's code and message. Others (a lost race, a store or model
 * provider failure, a killed worker) are retried, on any worker.
 */
const FINAL_CODES: ReadonlySet<string> = new Set([
  'CONFIGURATION',
  'INVALID_ID',
  'INVALID_INPUT',
  'NOT_FOUND',
  'SESSION_CLOSED',
  'AMBIGUOUS_BRANCH',
  'ASSET_TOO_LARGE',
  'MODEL_BEHAVIOR',
  'OUTPUT_VALIDATION',
  'MAX_STEPS',
  'AUTHENTICATION',
  'BAD_REQUEST',
  'CHECKPOINT_CORRUPT',
  'DOCUMENT_CORRUPT',
  'UNSUPPORTED_SCHEMA_VERSION',
]);

/**
 * The turn activities over a handoff workflow (its participants, store and memory): the session
 * workflow calls them on any worker of its task queue. The store stays the system of record:
 * `batonTurn` opens the session from it, and on a retry (a killed worker, a lost lease) finishes
 * what the earlier attempt stored by the recovery rules (`session.resume()`, never a second copy of
 * the user's message or of a stored tool result) or, when that attempt committed everything, just
 * reads the result back. It heartbeats the seq of each message as it is committed, so a dead worker
 * is noticed within the heartbeat timeout and the turn moves to a live one.
 *
 * @example
 * ```ts
 * const worker = await Worker.create({ connection, taskQueue: 'desk', workflowsPath, activities: createTurnActivities(desk) });
 * ```
 */
export function createTurnActivities(workflow: HandoffWorkflow): TurnActivities {
  return {
    async batonOpenSession(target) {
      const session = await named(() => open(workflow, target));
      const closed = session.info.status === 'closed' || session.routingState === 'closed';
      return {
        headSeq: headSeqOf(session),
        closed,
        pendingRequests: closed ? [] : session.pendingRequests.map((r) => structuredClone(r)),
      };
    },
    async batonTurn(input) {
      return named(() => runOperation(workflow, input));
    },
  };
}

async function runOperation(workflow: HandoffWorkflow, input: TurnActivityInput): Promise<CommittedTurn> {
  const context = Context.current();
  const { target, operation, afterSeq } = input;
  const session = await open(workflow, target);
  if (operation.kind === 'close') {
    await session.close({ reason: operation.reason }); // closing twice is a no-op, so a retry is too
    return committedTurn(workflow, session, target, afterSeq);
  }
  const signal = context.cancellationSignal;
  if (context.info.attempt > 1) {
    // A retry: what the earlier attempt stored is this operation's, and it is finished, not redone.
    const head = headSeqOf(session);
    const answered = operation.kind === 'respond' && !session.pendingRequests.some((r) => r.id === operation.requestId);
    if (session.routingState === 'running' && (head > afterSeq || answered))
      return drive(workflow, session, input, session.resume({ signal }));
    if (head > afterSeq || answered) return committedTurn(workflow, session, target, afterSeq);
  }
  const stream =
    operation.kind === 'send'
      ? session.send(operation.text, { signal })
      : session.respond(operation.requestId, operation.answer, { signal });
  return drive(workflow, session, input, stream);
}

/** Reads a turn's events, heartbeating the last committed seq, and returns the committed result. */
async function drive(
  workflow: HandoffWorkflow,
  session: HandoffSession,
  input: TurnActivityInput,
  stream: TurnStream,
): Promise<CommittedTurn> {
  const context = Context.current();
  let progress = { seq: input.afterSeq };
  // A model call may stream nothing for a while: keep telling Temporal this worker is alive.
  const beat = setInterval(() => context.heartbeat(progress), 1_000);
  let usage: Usage = emptyUsage();
  let completed = false;
  try {
    for await (const event of stream) {
      // A heartbeat per committed message; deltas and tool starts only cost CPU (the interval keeps the worker alive).
      if (event.type !== 'message') continue;
      progress = { seq: event.message.seq };
      context.heartbeat(progress);
    }
    const result = await stream;
    usage = result.usage;
    completed = result.completed || result.closed;
  } finally {
    clearInterval(beat);
  }
  return committedTurn(workflow, session, input.target, input.afterSeq, usage, completed);
}

function open(workflow: HandoffWorkflow, target: SessionTarget): Promise<HandoffSession> {
  return workflow.session({
    id: target.sessionId,
    branch: target.branch ?? 'main',
    ...(target.tenantId === undefined ? {} : { tenantId: target.tenantId }),
    ...(target.userId === undefined ? {} : { userId: target.userId }),
  });
}

/** Runs `work`, turning a Baton error into an `ApplicationFailure` of its code (final for the caller's mistakes). */
async function named<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof BatonError) {
      throw ApplicationFailure.create({
        type: error.code,
        message: error.message,
        nonRetryable: FINAL_CODES.has(error.code),
        cause: error,
      });
    }
    if (error instanceof ApplicationFailure) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw ApplicationFailure.create({
      type: TURN_FAILED,
      message,
      ...(error instanceof Error ? { cause: error } : {}),
    });
  }
}
