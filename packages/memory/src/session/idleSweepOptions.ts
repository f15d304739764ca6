import { ConfigurationError, type ContextProvider, type Executor, InvalidInputError, type Store } from '@baton/core';

/** Options of {@link closeIdleSessions}. */
export interface CloseIdleSessionsOptions {
  /** Where the sessions are listed, closed and read. */
  store: Store;
  /** Close sessions with no activity for more than this many milliseconds. */
  idleFor: number;
  /** Only this tenant's sessions; omitted, every tenant's. */
  tenantId?: string;
  /**
   * Providers told of each close through `onSessionClose` (e.g. an `EpisodicMemory`, which saves
   * the episode); default none. A session is marked closed only after they all succeeded.
   */
  providers?: readonly ContextProvider[];
  /**
   * The participants that may have queued work outside Baton for a paused session (a
   * `HumanExecutor`'s tasks in its `HumanQueue`): each is told, through `Executor.withdrawRequests`,
   * of its requests the close drops, on every branch — the same participants the workflow was built
   * with, e.g. `[...workflow.config.participants.values()]`. Default none: queued tasks stay.
   */
  participants?: readonly Executor[];
  /** The `closedReason` written (default `'idle'`). */
  reason?: string;
  /** The clock (default now); sessions last active before `now - idleFor` are idle. */
  now?: Date;
  /** Close at most this many sessions per sweep (the most recently active idle ones first, as the store lists them). */
  limit?: number;
  /**
   * What to do with an idle session paused on a request (a question to the user, a tool waiting
   * for approval, a human operator's step), on any branch:
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

/** The options of {@link closeIdleSessions} checked, with their defaults. */
export interface CheckedSweepOptions {
  store: Store;
  idleFor: number;
  tenantId: string | undefined;
  providers: readonly ContextProvider[];
  participants: readonly Executor[];
  reason: string;
  now: Date | undefined;
  limit: number | undefined;
  pendingRequests: 'answer' | 'skip';
}

/**
 * Checks a sweep's options before anything is read (plain-JS callers included), so a mistake is a
 * named error naming the bad value instead of a `TypeError` halfway through a session.
 *
 * @param caller the function named in the messages (`closeIdleSessions`, `startIdleSweep`)
 * @throws {ConfigurationError} for a missing store, or providers, participants, reason, now, limit,
 *   tenantId or pendingRequests of the wrong shape; {@link InvalidInputError} for a negative or
 *   non-finite `idleFor`
 */
export function checkSweepOptions(options: CloseIdleSessionsOptions, caller: string): CheckedSweepOptions {
  const refuse = (text: string): never => {
    throw new ConfigurationError(`${caller} ${text}`);
  };
  if (typeof options !== 'object' || options === null) {
    refuse(`takes an options object { store, idleFor }, not ${show(options)}.`);
  }
  const { store, providers = [], participants = [], pendingRequests = 'answer' } = options;
  const isStore = typeof store === 'object' && store !== null && typeof store.listSessions === 'function';
  if (!isStore) refuse(`needs { store }: a Store such as InMemoryStore, FileStore or MongoStore, not ${show(store)}.`);
  const { idleFor } = options;
  if (typeof idleFor !== 'number' || !Number.isFinite(idleFor) || idleFor < 0) {
    const text = `idleFor must be a non-negative number of milliseconds, got ${show(idleFor)}.`;
    throw new InvalidInputError(`${caller} ${text}`);
  }
  if (!Array.isArray(providers) || providers.some((p) => typeof p !== 'object' || p === null)) {
    refuse(
      `providers must be an array of context providers (e.g. [new EpisodicMemory()]) or left out, ` +
        `not ${show(providers)}.`,
    );
  }
  const isExecutor = (p: unknown) => typeof p === 'object' && p !== null && typeof (p as Executor).name === 'string';
  if (!Array.isArray(participants) || !participants.every(isExecutor)) {
    refuse(
      `participants must be an array of executors (e.g. [operator], a HumanExecutor) or left out, ` +
        `not ${show(participants)}.`,
    );
  }
  if (pendingRequests !== 'answer' && pendingRequests !== 'skip') {
    refuse(`pendingRequests must be 'answer' or 'skip', not ${show(pendingRequests)}.`);
  }
  const { reason, now, limit, tenantId } = options;
  if (reason !== undefined && (typeof reason !== 'string' || reason.length === 0)) {
    refuse(`reason must be a non-empty string (the closedReason written), not ${show(reason)}.`);
  }
  if (now !== undefined && !(now instanceof Date && Number.isFinite(now.getTime()))) {
    refuse(`now must be a valid Date, not ${show(now)}.`);
  }
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit > 0)) {
    refuse(`limit must be a positive integer (sessions per sweep), not ${show(limit)}.`);
  }
  if (tenantId !== undefined && typeof tenantId !== 'string') {
    refuse(`tenantId must be a string, not ${show(tenantId)}.`);
  }
  return {
    store,
    idleFor: options.idleFor,
    tenantId: options.tenantId,
    providers,
    participants,
    reason: options.reason ?? 'idle',
    now: options.now,
    limit: options.limit,
    pendingRequests,
  };
}

/** A short picture of a bad value for an error message. */
function show(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return `a function ${value.name || '(anonymous)'}`;
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = Object.prototype.toString.call(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
