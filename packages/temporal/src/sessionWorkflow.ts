import type { HeldLease } from '@baton/core';
import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  type CarriedState,
  type CommittedTurn,
  closeUpdate,
  type OpenedSession,
  REQUEST_EXPIRED,
  respondUpdate,
  type SendArgs,
  type SessionTarget,
  type SessionTimers,
  type SessionWorkflowInput,
  sendUpdate,
  sessionStateQuery,
  TURN_FAILED,
  type TurnActivityInput,
  type TurnOperation,
} from './sessionContract.js';

// Runs in Temporal's workflow sandbox (deterministic, replayed): no I/O here, only timers, state
// and activities. The store stays the system of record; this keeps what it needs to route and time.

/** The activities the session workflow calls (implemented by `createTurnActivities`). */
interface TurnActivities {
  batonOpenSession(target: SessionTarget): Promise<OpenedSession>;
  batonTurn(input: TurnActivityInput): Promise<CommittedTurn>;
}

/** Error codes of Baton's caller errors: retrying the same operation gives the same refusal. */
const CALLER_CODES = [
  'CONFIGURATION',
  'INVALID_ID',
  'INVALID_INPUT',
  'NOT_FOUND',
  'SESSION_CLOSED',
  'AMBIGUOUS_BRANCH',
  'ASSET_TOO_LARGE',
  'ABORTED',
];

/**
 * The session workflow: one per conversation branch (see `sessionWorkflowId`). It takes user
 * messages, request answers and close as Updates, runs each as the turn activity on any worker
 * (one at a time, in arrival order), answers requests whose deadline passed and closes an idle
 * session with durable timers, and continues as new every `maxOperationsPerRun` operations.
 * It completes when the session is closed, returning its last state.
 */
export async function batonSession(input: SessionWorkflowInput): Promise<CarriedState> {
  const target: SessionTarget = {
    sessionId: input.sessionId,
    ...optional('tenantId', input.tenantId),
    ...optional('userId', input.userId),
    branch: input.branch ?? 'main',
  };
  const turn = input.turn ?? {};
  const activities = proxyActivities<TurnActivities>({
    startToCloseTimeout: turn.startToCloseTimeoutMs ?? 600_000,
    heartbeatTimeout: turn.heartbeatTimeoutMs ?? 30_000,
    retry: {
      initialInterval: 500,
      backoffCoefficient: 2,
      maximumInterval: 10_000,
      nonRetryableErrorTypes: CALLER_CODES,
      ...(turn.maximumAttempts === undefined ? {} : { maximumAttempts: turn.maximumAttempts }),
    },
  });
  const timers = input.timers ?? {};
  const deadlines = timers.requestDeadlineMs;
  const maxOperations = input.maxOperationsPerRun ?? 200;
  // Handlers are set before the session is opened (an Update may come with the start); operations wait for the open.
  let state: CarriedState = input.carried ?? {
    headSeq: 0,
    closed: false,
    lastActivityAt: Date.now(),
    pending: [],
    expired: [],
  };
  let opened = input.carried !== undefined;
  let busy = false;
  let operations = 0;
  /** Changes whenever the state does, so the main loop recomputes its next deadline. */
  let epoch = 0;

  /** Whether the last operation failed: the store may hold part of it, so the next one reads the head again. */
  let stale = false;

  /** Runs one operation at a time; `still` (checked once it is this operation's turn) may skip it. */
  const run = async (
    operation: TurnOperation,
    still: () => boolean = () => true,
    lease?: HeldLease,
  ): Promise<CommittedTurn | undefined> => {
    await condition(() => opened && !busy);
    if (!still()) return undefined;
    busy = true;
    try {
      if (state.closed && operation.kind !== 'close') throw closedFailure(target);
      if (stale) {
        state = {
          ...state,
          ...fromOpened(await activities.batonOpenSession(target), Date.now(), deadlines),
          pending: state.pending,
          expired: state.expired,
        };
        stale = false;
      }
      const result = await activities
        .batonTurn({ target, operation, afterSeq: state.headSeq, ...(lease === undefined ? {} : { lease }) })
        .catch((error: unknown) => {
          stale = true;
          // Closed elsewhere (another branch's close, an operator): this workflow's work is done.
          if (
            error instanceof ActivityFailure &&
            error.cause instanceof ApplicationFailure &&
            error.cause.type === 'SESSION_CLOSED'
          )
            state = { ...state, closed: true };
          return rethrowNamed(error);
        });
      state = afterTurn(state, result, Date.now(), deadlines);
      return result;
    } finally {
      busy = false;
      operations += 1;
      epoch += 1;
    }
  };
  const update = async (operation: TurnOperation, lease?: HeldLease): Promise<CommittedTurn> =>
    (await run(operation, undefined, lease)) as CommittedTurn;

  setHandler(sendUpdate, ({ text, assets, lease }) => update(sendOperation(text, assets), lease), {
    validator: (_message: SendArgs) => {
      if (state.closed) throw closedFailure(target);
    },
  });
  setHandler(respondUpdate, ({ requestId, answer, lease }) => update({ kind: 'respond', requestId, answer }, lease), {
    validator: ({ requestId }) => {
      if (state.closed) throw closedFailure(target);
      if (state.expired.includes(requestId)) {
        throw ApplicationFailure.create({
          type: 'NOT_FOUND',
          nonRetryable: true,
          message: `Request ${JSON.stringify(requestId)} expired (${REQUEST_EXPIRED}) and was answered as such; it takes no answer now.`,
        });
      }
    },
  });
  setHandler(closeUpdate, ({ reason }) => update({ kind: 'close', reason: reason ?? 'closed' }));
  setHandler(sessionStateQuery, () => state);
  if (!opened) {
    state = fromOpened(await activities.batonOpenSession(target), Date.now(), deadlines);
    opened = true;
  }

  while (!state.closed) {
    const due = nextDue(state, timers.idleCloseMs);
    const seen = epoch;
    const changed = () => epoch !== seen || state.closed;
    // While an operation runs, a passed deadline waits for it (it may answer the request).
    const woke =
      busy || due === undefined
        ? await condition(changed).then(() => true)
        : await condition(changed, Math.max(1, due.at - Date.now()));
    if (!woke && due !== undefined && Date.now() >= due.at) {
      if (due.requestId === undefined)
        await run(
          { kind: 'close', reason: 'idle' },
          () => !state.closed && nextDue(state, timers.idleCloseMs)?.at === due.at,
        );
      else await expire(due.requestId);
    }
    if (!busy && !state.closed && (operations >= maxOperations || workflowInfo().continueAsNewSuggested)) {
      await condition(() => allHandlersFinished() && !busy);
      await continueAsNew<typeof batonSession>({ ...input, carried: state });
    }
  }
  await condition(allHandlersFinished);
  return state;

  async function expire(requestId: string): Promise<void> {
    const request = state.pending.find((r) => r.id === requestId);
    if (request === undefined) return;
    const why = `${REQUEST_EXPIRED}: not answered within ${deadlines?.[request.type] ?? 0} ms`;
    const answer =
      request.type === 'tool_approval'
        ? { approved: false as const, reason: why }
        : request.type === 'human_step'
          ? { reply: why }
          : why;
    const stillPending = () => !state.closed && state.pending.some((r) => r.id === requestId);
    try {
      await run({ kind: 'respond', requestId, answer }, () => {
        if (!stillPending()) return false;
        state = { ...state, expired: [...state.expired, requestId].slice(-100) };
        return true;
      });
    } catch {
      // Answered or closed elsewhere meanwhile: the timer has nothing left to do.
      state = { ...state, pending: state.pending.filter((r) => r.id !== requestId) };
    }
  }
}

/** The earliest timer: a request's deadline, or the idle close. */
function nextDue(state: CarriedState, idleCloseMs: number | undefined): { at: number; requestId?: string } | undefined {
  let due: { at: number; requestId?: string } | undefined =
    idleCloseMs === undefined ? undefined : { at: state.lastActivityAt + idleCloseMs };
  for (const request of state.pending) {
    if (request.expiresAt !== undefined && (due === undefined || request.expiresAt < due.at))
      due = { at: request.expiresAt, requestId: request.id };
  }
  return due;
}

type Deadlines = SessionTimers['requestDeadlineMs'];

function fromOpened(opened: OpenedSession, now: number, deadlines: Deadlines): CarriedState {
  return track(
    { headSeq: opened.headSeq, closed: opened.closed, lastActivityAt: now, pending: [], expired: [] },
    opened.pendingRequests,
    now,
    deadlines,
  );
}

function afterTurn(state: CarriedState, result: CommittedTurn, now: number, deadlines: Deadlines): CarriedState {
  return track(
    { ...state, headSeq: result.headSeq, closed: result.closed, lastActivityAt: now },
    result.pendingRequests,
    now,
    deadlines,
  );
}

/** Tracks the pending requests, keeping the deadline of those already tracked and starting one for new ones. */
function track(
  state: CarriedState,
  pending: readonly { id: string; type: CarriedState['pending'][number]['type'] }[],
  now: number,
  deadlines: Deadlines,
): CarriedState {
  return {
    ...state,
    pending: pending.map((request) => {
      const known = state.pending.find((r) => r.id === request.id);
      if (known !== undefined) return known;
      const ms = deadlines?.[request.type];
      return { id: request.id, type: request.type, ...(ms === undefined ? {} : { expiresAt: now + ms }) };
    }),
  };
}

function closedFailure(target: SessionTarget): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'SESSION_CLOSED',
    nonRetryable: true,
    message: `Session ${JSON.stringify(target.sessionId)} is closed; it accepts no more turns. Start a new session.`,
  });
}

/** An activity's failure as the Update's: the Baton error's code and message, not Temporal's wrapping. */
function rethrowNamed(error: unknown): never {
  if (error instanceof ActivityFailure && error.cause instanceof ApplicationFailure) {
    throw ApplicationFailure.create({
      type: error.cause.type ?? TURN_FAILED,
      message: error.cause.message,
      nonRetryable: true,
      details: error.cause.details ?? [],
    });
  }
  throw error;
}

/** A send operation; no `assets` key for none, so a text-only send's activity input is as before. */
function sendOperation(text: SendArgs['text'], assets: SendArgs['assets']): TurnOperation {
  return assets === undefined || assets.length === 0 ? { kind: 'send', text } : { kind: 'send', text, assets };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
