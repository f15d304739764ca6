import { BatonError, emptyUsage, type Usage } from '@baton/core';
import type { HandoffSession, HandoffWorkflow, TurnStream } from '@baton/handoff';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { type BranchHold, holdBranch } from './branchHold.js';
import { committedTurn, headSeqOf } from './committedTurn.js';
import {
  type CommittedTurn,
  type OpenedSession,
  type SessionTarget,
  TURN_FAILED,
  type TurnActivityInput,
  type TurnOperation,
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
 * A turn holds its branch's store lease while it runs, as an in-process turn of `@baton/server`
 * does (see `holdBranch`): an in-process turn on the branch meanwhile is refused (409,
 * `ConcurrencyError`), and an attempt that finds another holder's live lease fails with
 * `CONCURRENCY`, which Temporal retries, and then begins at the branch's head. An attempt whose
 * lease was taken over (it expired: a starved worker) is aborted and fails the same way; its retry
 * finishes the turn by the recovery rules.
 *
 * @param options `leaseTtlMs`: how long a lease lasts without renewal (default 15,000 ms, renewed
 *   every third of it; a killed worker's turn is taken over once it expired)
 * @example
 * ```ts
 * const activities = createTurnActivities(desk, { leaseTtlMs: 15_000 });
 * const worker = await Worker.create({ connection, taskQueue: 'desk', workflowsPath, activities });
 * ```
 */
export function createTurnActivities(workflow: HandoffWorkflow, options: { leaseTtlMs?: number } = {}): TurnActivities {
  const leaseTtlMs = options.leaseTtlMs ?? 15_000;
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
      return named(() => runOperation(workflow, input, leaseTtlMs));
    },
  };
}

async function runOperation(
  workflow: HandoffWorkflow,
  input: TurnActivityInput,
  leaseTtlMs: number,
): Promise<CommittedTurn> {
  const context = Context.current();
  const { target, operation } = input;
  if (operation.kind === 'close') {
    const session = await open(workflow, target);
    await session.close({ reason: operation.reason }); // closing twice is a no-op, so a retry is too
    return committedTurn(workflow, session, target, input.afterSeq);
  }
  // The branch's lease before anything is written, as an in-process turn takes it.
  const hold = await holdBranch(workflow.config.store, input, context.info, leaseTtlMs);
  try {
    if (hold.lease !== undefined) context.heartbeat({ seq: input.afterSeq, epoch: hold.lease.epoch });
    const signal =
      hold.lease === undefined
        ? context.cancellationSignal
        : AbortSignal.any([context.cancellationSignal, hold.lease.lost]);
    const result = await runHeld(workflow, { ...input, operation }, hold, signal);
    // A lease taken over mid-turn: this attempt's end may not be the turn's; a retry finishes it.
    if (hold.lease?.lost.aborted === true) throw hold.lease.lost.reason;
    return result;
  } catch (error) {
    throw hold.lease?.lost.aborted === true ? hold.lease.lost.reason : error;
  } finally {
    await hold.lease?.release();
  }
}

async function runHeld(
  workflow: HandoffWorkflow,
  input: TurnActivityInput & { operation: Exclude<TurnOperation, { kind: 'close' }> },
  hold: BranchHold,
  signal: AbortSignal,
): Promise<CommittedTurn> {
  const { target, operation } = input;
  const session = await open(workflow, target);
  if (hold.continuing) {
    // A retry: what the earlier attempt stored is this operation's, and it is finished, not redone.
    const head = headSeqOf(session);
    const answered = operation.kind === 'respond' && !session.pendingRequests.some((r) => r.id === operation.requestId);
    if (session.routingState === 'running' && (head > input.afterSeq || answered))
      return drive(workflow, session, input, session.resume({ signal }), hold.lease?.epoch);
    if (head > input.afterSeq || answered) return committedTurn(workflow, session, target, input.afterSeq);
  }
  // Begun here: what the branch holds now (a turn run by other means included) is not this operation's.
  const begun = { ...input, afterSeq: headSeqOf(session) };
  const stream =
    operation.kind === 'send'
      ? session.send(operation.text, operation.assets === undefined ? { signal } : { signal, assets: operation.assets })
      : session.respond(operation.requestId, operation.answer, { signal });
  return drive(workflow, session, begun, stream, hold.lease?.epoch);
}

/** Reads a turn's events, heartbeating the last committed seq, and returns the committed result. */
async function drive(
  workflow: HandoffWorkflow,
  session: HandoffSession,
  input: TurnActivityInput,
  stream: TurnStream,
  epoch?: number,
): Promise<CommittedTurn> {
  const context = Context.current();
  let progress = { seq: input.afterSeq, ...(epoch === undefined ? {} : { epoch }) };
  // A model call may stream nothing for a while: keep telling Temporal this worker is alive.
  const beat = setInterval(() => context.heartbeat(progress), 1_000);
  let usage: Usage = emptyUsage();
  let completed = false;
  try {
    for await (const event of stream) {
      // A heartbeat per committed message; deltas and tool starts only cost CPU (the interval keeps the worker alive).
      if (event.type !== 'message') continue;
      progress = { ...progress, seq: event.message.seq };
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
