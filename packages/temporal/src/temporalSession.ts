import { randomUUID } from 'node:crypto';
import {
  type AssetRef,
  ConfigurationError,
  type HeldLease,
  type MessageEvent,
  SessionClosedError,
  type SessionClosedEvent,
  type Store,
} from '@baton/core';
import type { RequestAnswer } from '@baton/handoff';
import {
  type Client,
  WorkflowExecutionAlreadyStartedError,
  type WorkflowHandle,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { awaitUpdate } from './awaitUpdate.js';
import { batonFailure } from './batonFailure.js';
import { type CommittedEventsOptions, committedEvents } from './committedEvents.js';
import { sendAssets } from './sendAssets.js';
import {
  type CarriedState,
  type CommittedTurn,
  closeUpdate,
  respondUpdate,
  type SessionWorkflowInput,
  sendUpdate,
  sessionStateQuery,
} from './sessionContract.js';
import type { batonSession } from './sessionWorkflow.js';
import { sessionWorkflowId } from './sessionWorkflowId.js';
import { UpdateWaitEndedError } from './updateWaitEndedError.js';

/** Per-call options of a {@link TemporalSession} operation. */
export interface TemporalCallOptions {
  /**
   * The Update's id: the idempotency key of this call (default: a generated UUID). A call repeated
   * with the same id (a client that retried after a timeout) gets the first call's result instead of
   * running again, while the workflow run that accepted it is the current one (Temporal dedupes per run;
   * a run continues as new every `maxOperationsPerRun` operations).
   */
  updateId?: string;
  /**
   * Ends the caller's wait (not the operation) when aborted: the call throws `UpdateWaitEndedError`;
   * the operation still runs once, and a call with the same `updateId` gets its result.
   */
  signal?: AbortSignal;
  /**
   * The longest the caller waits for the committed result, in ms, over every RPC it takes (default:
   * no limit; a turn retried after a worker died can take minutes). Past it the call throws
   * `UpdateWaitEndedError`, the operation going on as with `signal`.
   */
  timeoutMs?: number;
  /**
   * The branch's store lease the caller holds for this operation (`send` and `respond`): the worker
   * works under it (the caller renews and releases it; the worker stops if it is taken over) instead
   * of taking its own, which the caller's hold would refuse. `temporalRunner` passes
   * `@baton/server`'s; a caller holding no lease leaves it out.
   */
  lease?: HeldLease;
}

/**
 * One conversation branch run by its session workflow on a Temporal cluster: the session shape of
 * `@baton/handoff` (`send`, `respond`, `close`, `pendingRequests`), each call an Update the caller
 * awaits until the turn is committed, on whichever worker ran it (a worker killed mid-turn is
 * replaced by another without a new call). Get one from `TemporalSessions.session()`.
 *
 * @example
 * ```ts
 * const chat = sessions.session({ sessionId: 'chat-81', userId: 'u-42' });
 * const turn = await chat.send('I was charged twice');
 * const [approval] = turn.pendingRequests;
 * if (approval) await chat.respond(approval.id, { approved: true });
 * await chat.close({ reason: 'resolved' });
 * ```
 */
export class TemporalSession {
  readonly #client: Client;
  readonly #input: SessionWorkflowInput;
  readonly #taskQueue: string;
  readonly #store: Store | undefined;
  #started: Promise<WorkflowHandle<typeof batonSession>> | undefined;

  /** @internal Use `TemporalSessions.session()`. */
  constructor(client: Client, taskQueue: string, input: SessionWorkflowInput, store?: Store) {
    this.#client = client;
    this.#store = store;
    this.#taskQueue = taskQueue;
    this.#input = input;
    this.workflowId = sessionWorkflowId(input);
  }

  /** The session workflow's id (`baton/<tenant>/<session>/<branch>`), as Temporal's UI and CLI show it. */
  readonly workflowId: string;

  /** The session id. */
  get id(): string {
    return this.#input.sessionId;
  }

  /**
   * Sends the user's text (or several messages in a row) and resolves once the turn is committed.
   * With `assets` (references of this session's assets, from `session.attach` or `store.putAsset`),
   * each user message keeps them in `metadata.assets`, as an in-process `session.send` stores them.
   * @returns the committed turn (`TurnResult`'s shape, plus `headSeq` and `turn`)
   * @throws {SessionClosedError} when the session is closed; `InvalidInputError` when an approval is
   *   pending (use `respond`), or for `assets` that are not asset references of this session (before any Update)
   * @example
   * ```ts
   * const turn = await chat.send('Here is my receipt', { assets: [receipt] });
   * turn.messages[0]?.metadata?.assets; // [receipt]
   * ```
   */
  send(
    text: string | string[],
    options: TemporalCallOptions & { assets?: readonly AssetRef[] } = {},
  ): Promise<CommittedTurn> {
    let assets: AssetRef[] | undefined;
    try {
      assets = sendAssets(this.#input.sessionId, options.assets);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#update(
      sendUpdate,
      { text, ...(assets === undefined ? {} : { assets }), ...leaseOf(options) },
      options,
    );
  }

  /**
   * Answers a pending request (text for `user_input`, `{ approved }` for `tool_approval`, …).
   * @throws `NotFoundError` for an unknown request id, or one that expired (its deadline passed); `InvalidInputError` for an answer of the wrong kind
   */
  respond(requestId: string, answer: RequestAnswer, options: TemporalCallOptions = {}): Promise<CommittedTurn> {
    return this.#update(respondUpdate, { requestId, answer, ...leaseOf(options) }, options);
  }

  /** Closes the session (pending requests answered, the episode saved); the workflow then completes. Closing twice is a no-op. */
  async close(options: { reason?: string } & TemporalCallOptions = {}): Promise<void> {
    try {
      await this.#update(closeUpdate, options.reason === undefined ? {} : { reason: options.reason }, options);
    } catch (error) {
      if (!(error instanceof SessionClosedError)) throw error;
    }
  }

  /**
   * The branch's committed messages as `message` events, as the workers store them, then
   * `session.closed` (see {@link committedEvents}; read from the store given to `TemporalSessions`).
   * @throws {ConfigurationError} when `TemporalSessions` was made without `store`
   * @example
   * ```ts
   * const controller = new AbortController();
   * const turn = chat.send('Where is order 1234?');
   * for await (const event of chat.events({ afterSeq: 0, signal: controller.signal })) if (event.type === 'message') render(event.message);
   * ```
   */
  events(options: CommittedEventsOptions = {}): AsyncGenerator<MessageEvent | SessionClosedEvent, void> {
    if (this.#store === undefined) {
      throw new ConfigurationError(
        'TemporalSession.events() reads committed messages from the store: pass new TemporalSessions({ client, taskQueue, store }) with the store the workers write.',
      );
    }
    return committedEvents(this.#store, this.#input, options);
  }

  /** What the session workflow knows now: head seq, pending requests (with deadlines), status. */
  async state(): Promise<CarriedState> {
    const handle = await this.#handle();
    return handle.query(sessionStateQuery);
  }

  async #update<A>(
    update: typeof sendUpdate | typeof respondUpdate | typeof closeUpdate,
    args: A,
    options: TemporalCallOptions,
  ): Promise<CommittedTurn> {
    const handle = await this.#handle();
    const wait = {
      updateId: options.updateId ?? randomUUID(),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    };
    try {
      // biome-ignore lint/suspicious/noExplicitAny: the three Updates take one argument each, checked by the public methods
      return await awaitUpdate(this.#client, handle, update as any, [args], wait);
    } catch (error) {
      if (error instanceof UpdateWaitEndedError) throw error;
      if (error instanceof WorkflowUpdateFailedError) throw batonFailure(error);
      // No Update reaches a completed workflow: its session was closed.
      const status = await handle.describe().then(
        (d) => d.status.name,
        () => undefined,
      );
      if (status === 'COMPLETED') throw this.#closed(error);
      throw error;
    }
  }

  #closed(cause: unknown): SessionClosedError {
    return new SessionClosedError(
      `Session ${JSON.stringify(this.#input.sessionId)} is closed (its workflow ${this.workflowId} completed); it accepts no more turns. Start a new session.`,
      { cause },
    );
  }

  /** Starts the session workflow unless it runs (one per branch); a completed one means the session was closed. */
  #handle(): Promise<WorkflowHandle<typeof batonSession>> {
    this.#started ??= this.#client.workflow
      .start<typeof batonSession>('batonSession', {
        workflowId: this.workflowId,
        taskQueue: this.#taskQueue,
        args: [this.#input],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      })
      .catch((error: unknown) => {
        this.#started = undefined;
        if (error instanceof WorkflowExecutionAlreadyStartedError) throw this.#closed(error);
        throw error;
      });
    return this.#started;
  }
}

function leaseOf(options: TemporalCallOptions): { lease?: HeldLease } {
  return options.lease === undefined ? {} : { lease: { owner: options.lease.owner, epoch: options.lease.epoch } };
}
