import { ConcurrencyError, type ContextProvider, InvalidInputError, MAIN_BRANCH, NotFoundError, type Session, type SessionFilter, type Store } from '@baton/core';
import { agentsOf } from '../episodic/buildEpisode.js';
import { answerOpenToolCalls, findOpenToolCalls } from './answerOpenToolCalls.js';

/** Options of {@link closeIdleSessions}. */
export interface CloseIdleSessionsOptions {
  /** Where the sessions are listed, closed and read. */
  store: Store;
  /** Close sessions with no activity for more than this many milliseconds. */
  idleFor: number;
  /** Only this tenant's sessions; omitted, every tenant's. */
  tenantId?: string;
  /** Providers told of each close through `onSessionClose` (e.g. an `EpisodicMemory`, which saves the episode). */
  providers: readonly ContextProvider[];
  /** The `closedReason` written (default `'idle'`). */
  reason?: string;
  /** The clock (default now); sessions last active before `now - idleFor` are idle. */
  now?: Date;
  /** Close at most this many sessions per sweep (the most recently active idle ones first, as the store lists them). */
  limit?: number;
  /**
   * What to do with an idle session paused on a request (a question to the user, a tool waiting
   * for approval), i.e. with tool calls that have no result yet:
   * - `'answer'` (default): give each open call a result, then close. A call whose tool already
   *   ran keeps its finished result (from the newest checkpoint); the others get an error result
   *   `The conversation was closed before this was answered (<reason>).` The tool never runs.
   *   What a support desk wants: a customer who walked away from a question is closed and
   *   remembered like any idle conversation, and no tool call is left dangling.
   * - `'skip'`: leave such sessions open and untouched (listed in `skipped`), e.g. when approvals
   *   may take longer than `idleFor`.
   */
  pendingRequests?: 'answer' | 'skip';
}

/** What a sweep did: sessions it closed, sessions another writer closed or touched first, and failures. */
export interface CloseIdleSessionsResult {
  /** Ids of the sessions this sweep closed, in the order the store listed them. */
  closed: string[];
  /** Ids of idle sessions it left: another writer closed, deleted or touched them first, or (with `pendingRequests: 'skip'`) paused on a request. */
  skipped: string[];
  /**
   * Sessions this sweep closed whose `onSessionClose` threw (the session stays closed), and
   * sessions whose open tool calls could not be answered, e.g. a damaged checkpoint (the session stays open).
   */
  failed: Array<{ sessionId: string; error: unknown }>;
}

/**
 * Closes every active session idle longer than `idleFor` and tells `providers`. A session paused
 * on a request first gets a result for each open tool call (see `pendingRequests`), so no tool call
 * is left dangling. Each close is a
 * compare-and-set on the session's version (`updateSession(…, { expectedVersion })`): when two sweeps
 * (in one process or many) race for a session, exactly one wins and only the winner calls
 * `onSessionClose`, with the `main` branch's messages; the loser gets a `ConcurrencyError` and skips
 * the session (as it does when new activity touched the session since the listing). Callable from
 * any scheduler (cron, a queue worker) or through `startIdleSweep`.
 *
 * @param options `{ store, idleFor, providers, tenantId?, reason?, now?, limit?, pendingRequests? }`; `idleFor` in milliseconds
 * @returns ids closed, skipped, and those whose providers failed (the sweep goes on with the rest)
 * @throws {InvalidInputError} for a negative or non-finite `idleFor`; the store's errors other than
 *   `ConcurrencyError` / `NotFoundError`
 * @example
 * ```ts
 * import { closeIdleSessions, EpisodicMemory } from '@baton/memory';
 * const memory = new EpisodicMemory();
 * const { closed } = await closeIdleSessions({ store, idleFor: 30 * 60_000, providers: [memory] });
 * ```
 */
export async function closeIdleSessions(options: CloseIdleSessionsOptions): Promise<CloseIdleSessionsResult> {
  const { store, providers } = options;
  if (!Number.isFinite(options.idleFor) || options.idleFor < 0) {
    throw new InvalidInputError(`closeIdleSessions idleFor must be a non-negative number of milliseconds, got ${JSON.stringify(options.idleFor)}.`);
  }
  const now = options.now ?? new Date();
  const reason = options.reason ?? 'idle';
  const filter: SessionFilter = { status: 'active', activeBefore: new Date(now.getTime() - options.idleFor).toISOString() };
  if (options.tenantId !== undefined) filter.tenantId = options.tenantId;
  if (options.limit !== undefined) filter.limit = options.limit;
  const result: CloseIdleSessionsResult = { closed: [], skipped: [], failed: [] };

  for (const idle of await store.listSessions(filter)) {
    const scope = idle.tenantId === undefined ? {} : { tenantId: idle.tenantId };
    let session: Session;
    try {
      // Open tool calls are answered before the close, so a crash in between leaves an idle session
      // with no dangling call (the next sweep closes it), never a closed one with a dangling call.
      const open = await findOpenToolCalls(store, idle.id, scope);
      if (open.length > 0) {
        if (options.pendingRequests === 'skip') {
          result.skipped.push(idle.id);
          continue;
        }
        const current = await store.getSession(idle.id, scope);
        if (current?.version !== idle.version) throw new ConcurrencyError(`Session ${JSON.stringify(idle.id)} changed since it was listed.`);
        try {
          await answerOpenToolCalls(store, idle.id, open, reason, now, scope);
        } catch (error) {
          if (error instanceof ConcurrencyError || error instanceof NotFoundError) throw error;
          result.failed.push({ sessionId: idle.id, error });
          continue;
        }
      }
      session = await store.updateSession(idle.id, { status: 'closed', closedAt: now.toISOString(), closedReason: reason }, { expectedVersion: idle.version, ...scope });
    } catch (error) {
      if (error instanceof ConcurrencyError || error instanceof NotFoundError) {
        result.skipped.push(idle.id);
        continue;
      }
      throw error;
    }
    result.closed.push(session.id);
    try {
      const messages = await store.readMessages(session.id, MAIN_BRANCH, scope);
      const agents = agentsOf(messages);
      for (const provider of providers) await provider.onSessionClose?.({ session, reason, messages, agents, store });
    } catch (error) {
      result.failed.push({ sessionId: session.id, error });
    }
  }
  return result;
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
 * @throws {InvalidInputError} for a non-positive `every`
 * @example
 * ```ts
 * import { EpisodicMemory, startIdleSweep } from '@baton/memory';
 * const memory = new EpisodicMemory();
 * const stop = startIdleSweep({ store, every: 60_000, idleFor: 30 * 60_000, providers: [memory] });
 * process.on('SIGTERM', () => void stop());
 * ```
 */
export function startIdleSweep(options: IdleSweepOptions): () => Promise<void> {
  if (!Number.isFinite(options.every) || options.every <= 0) {
    throw new InvalidInputError(`startIdleSweep every must be a positive number of milliseconds, got ${JSON.stringify(options.every)}.`);
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
