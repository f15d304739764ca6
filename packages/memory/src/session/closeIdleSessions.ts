import {
  answerOpenToolCalls,
  ConcurrencyError,
  findOpenToolCalls,
  InvalidInputError,
  MAIN_BRANCH,
  NotFoundError,
  type OpenToolCalls,
  type Session,
  type SessionFilter,
  type TenantScope,
  withdrawRequests,
} from '@baton/core';
import { agentsOf } from '../episodic/buildEpisode.js';
import { type CheckedSweepOptions, type CloseIdleSessionsOptions, checkSweepOptions } from './idleSweepOptions.js';

export type { CloseIdleSessionsOptions } from './idleSweepOptions.js';

/** What a sweep did: sessions it closed, sessions it left to other writers, and sessions it could not close. */
export interface CloseIdleSessionsResult {
  /**
   * Ids of the sessions this sweep closed, in the order the store listed them: each is closed, its
   * open tool calls answered on every branch, its providers told and its participants' requests withdrawn.
   */
  closed: string[];
  /**
   * Ids of idle sessions it left: another writer closed, deleted or touched them first, or (with
   * `pendingRequests: 'skip'`) paused on a request.
   */
  skipped: string[];
  /**
   * Sessions this sweep could not close, each with its error: a provider's `onSessionClose` or a
   * participant's `withdrawRequests` threw, or the open tool calls could not be answered (e.g. a
   * damaged checkpoint). Each stays open (never also in `closed`), so the next sweep tries again.
   */
  failed: Array<{ sessionId: string; error: unknown }>;
}

/**
 * Closes every active session idle longer than `idleFor`. Per session: its open tool calls, on
 * every branch, get a result (see `pendingRequests`), so no tool call is left dangling; `providers`
 * are told (`onSessionClose`, with the `main` branch's messages); `participants` withdraw what they
 * queued for the dropped requests (a `HumanExecutor`'s tasks); then the session is marked closed.
 * A session is first claimed with a compare-and-set on its listed version
 * (`updateSession(…, { expectedVersion })`, changing nothing else): when two sweeps (in one process
 * or many) race for a session, exactly one goes on and only it calls `onSessionClose`; the other
 * skips the session (as it does when new activity touched the session since the listing). When a
 * provider or participant fails, the session stays open and is reported in `failed` only (the next
 * sweep retries it), as `session.close()` leaves a session open when a provider fails. Callable
 * from any scheduler (cron, a queue worker) or through `startIdleSweep`.
 *
 * @param options `{ store, idleFor, providers?, participants?, tenantId?, reason?, now?, limit?,
 *   pendingRequests? }`; `idleFor` in milliseconds
 * @returns ids closed, skipped, and those that failed (the sweep goes on with the rest)
 * @throws {InvalidInputError} for a negative or non-finite `idleFor`; {@link ConfigurationError} for
 *   other options of the wrong shape (a missing store, providers that are not an array, …); the
 *   store's errors when listing or writing a session, other than `ConcurrencyError` / `NotFoundError`
 * @example
 * ```ts
 * import { closeIdleSessions, EpisodicMemory } from '@baton/memory';
 * const memory = new EpisodicMemory();
 * // operator: the workflow's HumanExecutor, whose queued tasks of closed sessions are withdrawn
 * const participants = [operator];
 * const { closed } = await closeIdleSessions({ store, idleFor: 30 * 60_000, providers: [memory], participants });
 * ```
 */
export async function closeIdleSessions(options: CloseIdleSessionsOptions): Promise<CloseIdleSessionsResult> {
  const checked = checkSweepOptions(options, 'closeIdleSessions');
  const now = checked.now ?? new Date();
  const activeBefore = new Date(now.getTime() - checked.idleFor).toISOString();
  const filter: SessionFilter = { status: 'active', activeBefore };
  if (checked.tenantId !== undefined) filter.tenantId = checked.tenantId;
  if (checked.limit !== undefined) filter.limit = checked.limit;
  const result: CloseIdleSessionsResult = { closed: [], skipped: [], failed: [] };
  for (const idle of await checked.store.listSessions(filter)) {
    const outcome = await closeIdle(checked, idle, now);
    if (outcome === 'closed') result.closed.push(idle.id);
    else if (outcome === 'skipped') result.skipped.push(idle.id);
    else result.failed.push({ sessionId: idle.id, error: outcome.error });
  }
  return result;
}

/** What the sweep did with one session. */
type SessionOutcome = 'closed' | 'skipped' | { error: unknown };

/** Closes one listed session (see {@link closeIdleSessions}). */
async function closeIdle(options: CheckedSweepOptions, idle: Session, now: Date): Promise<SessionOutcome> {
  const { store, reason } = options;
  const scope: TenantScope = idle.tenantId === undefined ? {} : { tenantId: idle.tenantId };
  let open: OpenToolCalls[];
  try {
    open = await findOpenToolCalls(store, idle.id, scope);
  } catch (error) {
    if (error instanceof ConcurrencyError || error instanceof NotFoundError) return 'skipped';
    return { error };
  }
  if (open.length > 0 && options.pendingRequests === 'skip') return 'skipped';
  const closedAt = now.toISOString();
  return skipWhenRaced(async () => {
    // The claim: of racing sweeps one goes on; any later write to the session makes the close below lose.
    const claim = { lastActivityAt: idle.lastActivityAt };
    const claimed = await store.updateSession(idle.id, claim, { expectedVersion: idle.version, ...scope });
    try {
      // Open tool calls are answered before the close, so a crash in between leaves an idle session with
      // no dangling call (the next sweep, or the next opener, closes it), never a closed one with one.
      const content = `The conversation was closed before this was answered (${reason}).`;
      await answerOpenToolCalls(store, idle.id, open, { content, reason, now, scope });
      const messages = await store.readMessages(idle.id, MAIN_BRANCH, scope);
      const closing: Session = { ...claimed, status: 'closed', closedAt, closedReason: reason };
      const agents = agentsOf(messages);
      for (const provider of options.providers) {
        await provider.onSessionClose?.({ session: closing, reason, messages, agents, store });
      }
      await withdrawRequests(
        options.participants,
        open.flatMap((branch) => branch.requests),
      );
    } catch (error) {
      if (error instanceof ConcurrencyError || error instanceof NotFoundError) throw error;
      return { error };
    }
    const close = { status: 'closed' as const, closedAt, closedReason: reason };
    await store.updateSession(idle.id, close, { expectedVersion: claimed.version, ...scope });
    return 'closed';
  });
}

/** `work`'s outcome, or `'skipped'` when another writer changed or deleted the session first. */
async function skipWhenRaced<T>(work: () => Promise<T>): Promise<T | 'skipped'> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ConcurrencyError || error instanceof NotFoundError) return 'skipped';
    throw error;
  }
}

/** Options of {@link startIdleSweep}. */
export interface IdleSweepOptions extends Omit<CloseIdleSessionsOptions, 'now'> {
  /** Milliseconds between sweeps. */
  every: number;
  /** Called with each sweep's result. */
  onSweep?: (result: CloseIdleSessionsResult) => void;
  /** Called when a sweep throws (the timer keeps running). */
  onError?: (error: unknown) => void;
}

/**
 * Runs {@link closeIdleSessions} every `every` milliseconds in this process, on an unref'd timer
 * (it never keeps the process alive). A sweep is skipped while the previous one still runs.
 *
 * @param options {@link CloseIdleSessionsOptions} (without `now`) plus `every` (milliseconds between sweeps), `onSweep`, `onError`
 * @returns a function that stops the timer and resolves when a running sweep has finished
 * @throws {InvalidInputError} for a non-positive `every`; what {@link closeIdleSessions} throws for bad options
 * @example
 * ```ts
 * import { EpisodicMemory, startIdleSweep } from '@baton/memory';
 * const memory = new EpisodicMemory();
 * const stop = startIdleSweep({ store, every: 60_000, idleFor: 30 * 60_000, providers: [memory] });
 * process.on('SIGTERM', () => void stop());
 * ```
 */
export function startIdleSweep(options: IdleSweepOptions): () => Promise<void> {
  // Every option is checked now, not on the first tick (where a mistake would only reach onError).
  checkSweepOptions(options, 'startIdleSweep');
  if (!Number.isFinite(options.every) || options.every <= 0) {
    throw new InvalidInputError(
      `startIdleSweep every must be a positive number of milliseconds, got ${JSON.stringify(options.every)}.`,
    );
  }
  const { every, onSweep, onError, ...sweep } = options;
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running !== undefined) return;
    running = closeIdleSessions(sweep)
      .then((result) => onSweep?.(result))
      .catch((error: unknown) => onError?.(error))
      .finally(() => {
        running = undefined;
      });
  }, every);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
