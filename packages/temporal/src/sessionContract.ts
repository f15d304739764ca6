import type { AssetRef, HeldLease, Message, Request, Usage } from '@baton/core';
import type { RequestAnswer } from '@baton/handoff';
import { defineQuery, defineUpdate } from '@temporalio/workflow';

// This file is bundled into the workflow sandbox: it imports only types from Baton's packages.

/** Which conversation a session workflow runs: one per tenant, session and branch. */
export interface SessionTarget {
  sessionId: string;
  tenantId?: string;
  userId?: string;
  /** The branch (default `'main'`). */
  branch?: string;
}

/**
 * Durable timers of a session workflow, in milliseconds of workflow time (Temporal timers: they
 * survive worker and server restarts).
 */
export interface SessionTimers {
  /** Close the session (reason `'idle'`, its episode saved by memory) after this long without a turn. */
  idleCloseMs?: number;
  /**
   * Answer a pending request with the named expired result (see `REQUEST_EXPIRED`) once it waited
   * this long, per request type.
   */
  requestDeadlineMs?: Partial<Record<Request['type'], number>>;
}

/** How the workflow runs turn activities. */
export interface TurnActivitySettings {
  /** Longest one attempt of a turn may run, in ms (default 10 minutes). */
  startToCloseTimeoutMs?: number;
  /** A worker that has not heartbeated for this long is taken as dead and the turn moves on (default 30 s). */
  heartbeatTimeoutMs?: number;
  /** Attempts of a turn before its Update fails (default unlimited, as Temporal's default). */
  maximumAttempts?: number;
}

/** The input of the session workflow (`batonSession`). */
export interface SessionWorkflowInput extends SessionTarget {
  timers?: SessionTimers;
  turn?: TurnActivitySettings;
  /** Handled operations after which the workflow continues as new, to bound its history (default 200). */
  maxOperationsPerRun?: number;
  /** What a previous run handed over when it continued as new (set by the workflow itself). */
  carried?: CarriedState;
}

/** A request the workflow tracks for its deadline. */
export interface TrackedRequest {
  id: string;
  type: Request['type'];
  /** Workflow time (ms since the epoch) at which it expires; absent: no deadline. */
  expiresAt?: number;
}

/** What the session workflow knows of its session between operations. */
export interface CarriedState {
  /** The branch's last committed seq as of the last operation. */
  headSeq: number;
  closed: boolean;
  /** Workflow time (ms) of the last operation, for the idle timer. */
  lastActivityAt: number;
  pending: TrackedRequest[];
  /** Ids of requests the workflow answered as expired (so a late answer is refused by name). */
  expired: string[];
}

/** One operation a turn activity runs on the session. */
export type TurnOperation =
  | { kind: 'send'; text: string | string[]; assets?: AssetRef[] }
  | { kind: 'respond'; requestId: string; answer: RequestAnswer }
  | { kind: 'close'; reason: string };

/** The input of the turn activity. */
export interface TurnActivityInput {
  target: SessionTarget;
  operation: TurnOperation;
  /** The branch's last committed seq before this operation: what is stored after it belongs to this operation. */
  afterSeq: number;
  /** The branch lease the caller holds for this operation (`@baton/server`'s): the worker works under it. */
  lease?: HeldLease;
}

/**
 * What a session workflow's Update returns: the committed result of the operation, read back from
 * the store (every message of the turn once, also when a killed worker's attempt stored part of it).
 * The shape of `@baton/handoff`'s `TurnResult`.
 */
export interface CommittedTurn {
  sessionId: string;
  branchId: string;
  /** The last assistant message to the user the turn committed, if any. */
  message?: Message;
  /** Every message the operation committed, oldest first. */
  messages: Message[];
  /** The requests the session waits on after it. */
  pendingRequests: Request[];
  /** Model usage of the attempt that finished the turn (a killed attempt's calls are not counted). */
  usage: Usage;
  /** The agent that takes the next turn. */
  nextAgent?: string;
  /** Whether the turn reached its end (`turn.completed`) or paused on requests. */
  completed: boolean;
  /** Whether the session is closed. */
  closed: boolean;
  /** The branch's last committed seq after the operation. */
  headSeq: number;
  /**
   * The session's turn number after the operation (`HandoffSession.turn`): the `turn` of the
   * operation's `turn.started` and `turn.completed` (a message starts the next turn, an answer
   * continues the paused one).
   */
  turn: number;
}

/** What the open activity reports of a session. */
export interface OpenedSession {
  headSeq: number;
  closed: boolean;
  pendingRequests: Request[];
}

/**
 * The argument of {@link sendUpdate}: the user's text (or several messages sent in a row), the
 * references of the session's assets the message refers to (`AssetRef`s from `session.attach` or
 * `store.putAsset`: plain JSON; each user message keeps them in `metadata.assets`), and the branch
 * lease the caller holds for it (see `TemporalCallOptions`).
 */
export interface SendArgs {
  text: string | string[];
  assets?: AssetRef[];
  lease?: HeldLease;
}

/**
 * The session workflow's Updates and query, for callers that use Temporal's client directly
 * (`TemporalSession` wraps them): a user message (or several sent in a row) → the committed turn.
 * @example
 * ```ts
 * const turn = await client.workflow.getHandle(sessionWorkflowId({ sessionId: 'chat-81' })).executeUpdate(sendUpdate, { args: [{ text: 'hi' }] });
 * ```
 */
export const sendUpdate = defineUpdate<CommittedTurn, [SendArgs]>('baton.send');
/** An answer to a pending request (`lease`: the branch lease the caller holds for it, see `TemporalCallOptions`). */
export const respondUpdate = defineUpdate<
  CommittedTurn,
  [{ requestId: string; answer: RequestAnswer; lease?: HeldLease }]
>('baton.respond');
/** Closes the session (its episode saved by the worker's memory); the workflow then completes. */
export const closeUpdate = defineUpdate<CommittedTurn, [{ reason?: string }]>('baton.close');
/** What the workflow knows of its session now. */
export const sessionStateQuery = defineQuery<CarriedState>('baton.state');

/**
 * The reason (or text) an expired request is answered with starts with this name, so the model, a
 * reader of the stored history and the caller see why: `REQUEST_EXPIRED: not answered within 2000 ms`.
 */
export const REQUEST_EXPIRED = 'REQUEST_EXPIRED';

/** The error type of a refused or failed operation whose Baton error had no code (see the client's error mapping). */
export const TURN_FAILED = 'TURN_FAILED';
