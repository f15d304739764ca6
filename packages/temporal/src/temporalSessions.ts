import type { Store } from '@baton/core';
import type { Client } from '@temporalio/client';
import type { SessionTarget, SessionTimers, SessionWorkflowInput, TurnActivitySettings } from './sessionContract.js';
import { sessionWorkflowId } from './sessionWorkflowId.js';
import { TemporalSession } from './temporalSession.js';

/** Options of {@link TemporalSessions}. */
export interface TemporalSessionsOptions {
  /** A connected Temporal client (`new Client({ connection, namespace })`). */
  client: Client;
  /** The task queue the Baton workers poll (`createBatonWorker({ taskQueue })`). */
  taskQueue: string;
  /** Durable timers of every session started through this object: idle close, request deadlines. */
  timers?: SessionTimers;
  /** How the workflow runs turn activities (timeouts, heartbeat, attempts). */
  turn?: TurnActivitySettings;
  /** Operations per workflow run before it continues as new (default 200). */
  maxOperationsPerRun?: number;
  /** The store the workers write: `session.events()` reads committed messages from it. */
  store?: Store;
}

/**
 * The client side of Baton on Temporal: opens a {@link TemporalSession} per conversation branch,
 * each run by its session workflow (started on first use) on the workers of `taskQueue`.
 *
 * @example
 * ```ts
 * const sessions = new TemporalSessions({ client: new Client({ connection }), taskQueue: 'desk', timers: { idleCloseMs: 30 * 60_000 } });
 * const turn = await sessions.session({ sessionId: 'chat-81' }).send('Where is my order?');
 * console.log(turn.message?.content);
 * ```
 */
export class TemporalSessions {
  readonly #options: TemporalSessionsOptions;

  constructor(options: TemporalSessionsOptions) {
    this.#options = options;
  }

  /** The store given as `store` (the one the workers write), if any. */
  get store(): Store | undefined {
    return this.#options.store;
  }

  /**
   * The session object of one conversation branch (no call is made until its first operation).
   * @throws {InvalidIdError} for a session, tenant or branch id that is not a Baton id
   */
  session(target: SessionTarget): TemporalSession {
    sessionWorkflowId(target);
    const { timers, turn, maxOperationsPerRun } = this.#options;
    const input: SessionWorkflowInput = {
      ...target,
      ...(timers === undefined ? {} : { timers }),
      ...(turn === undefined ? {} : { turn }),
      ...(maxOperationsPerRun === undefined ? {} : { maxOperationsPerRun }),
    };
    return new TemporalSession(this.#options.client, this.#options.taskQueue, input, this.#options.store);
  }
}
