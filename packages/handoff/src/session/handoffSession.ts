import {
  type ApprovalGrant,
  type AssetRef,
  type BatonEvent,
  type Branch,
  type CheckpointManifestEntry,
  InvalidInputError,
  type Message,
  type PutAssetInput,
  type Request,
  type Session,
  type SessionAssets,
  type State,
  sessionAssets,
} from '@baton/core';
import type { RequestAnswer, SendOptions, TurnOptions } from '../config/handoffTypes.js';
import { type RoutingStateValue, routingState } from '../routing/routingMachine.js';
import { saveCheckpoint } from '../runtime/checkpointer.js';
import type { SessionRuntime } from '../runtime/sessionRuntime.js';
import { approvalGrantsOf } from '../turn/approvalGrants.js';
import { closeSession } from '../turn/closeSession.js';
import { turnCall } from '../turn/turnStart.js';
import { assetsMetadata } from './attachedAssets.js';
import { discardTurn } from './discardTurn.js';
import { forkAt } from './fork.js';
import { restoreCheckpoint } from './restore.js';
import { revokeApproval } from './revokeApproval.js';
import { rewindTo } from './rewind.js';
import { type HistoryPagesOptions, type HistoryRange, historyPages, readRange } from './sessionHistory.js';
import type { SessionLock } from './sessionLock.js';
import {
  assertOpen,
  lockedTurn,
  respondTo,
  resumeUnfinished,
  sendText,
  withSession,
  withSessionLock,
} from './sessionOperations.js';
import type { TurnStream } from './turnStream.js';

/** What a session needs from its workflow: the locks and a way to open another branch. */
export interface SessionHost {
  locks: SessionLock;
  openBranch(sessionId: string, branchId: string, tenantId: string | undefined): Promise<HandoffSession>;
}

/**
 * One conversation on one branch, from `workflow.session()`. Calls that run turns return async
 * iterables of events (docs/architecture.md "Events") that end with `turn.completed` once everything of the
 * turn is durable, or with a fatal `error` event followed by the thrown error. Two calls on the same
 * session branch never interleave: within a process the second waits for the first; across
 * processes the loser gets a `ConcurrencyError` and writes nothing. A stream holds the session's
 * lock until it ends: read it to the end, or leave the `for await` loop (`break`, `return`, a throw),
 * which ends it too; a stream that is neither read to its end nor left keeps later calls waiting.
 *
 * @example
 * ```ts
 * const session = await workflow.session({ id: 'chat-81', userId: 'u-42' });
 * for await (const event of session.send('I was charged twice')) if (event.type === 'message') console.log(event.message.content);
 * const [request] = session.pendingRequests;
 * if (request) for await (const event of session.respond(request.id, 'AC-99812')) {}
 * await session.close({ reason: 'resolved' });
 * ```
 */
export class HandoffSession {
  readonly #runtime: SessionRuntime;
  readonly #host: SessionHost;

  constructor(runtime: SessionRuntime, host: SessionHost) {
    this.#runtime = runtime;
    this.#host = host;
  }

  /** The session id. */
  get id(): string {
    return this.#runtime.sessionId;
  }

  /** The branch this object works on (`'main'` unless opened on a fork). */
  get branchId(): string {
    return this.#runtime.branchId;
  }

  /** The session document as last loaded or written (status, version, state, …). */
  get info(): Readonly<Session> {
    return this.#runtime.session;
  }

  /** Requests the turn is paused on, oldest call first. */
  get pendingRequests(): readonly Request[] {
    return this.#runtime.pendingRequests;
  }

  /**
   * The session's standing approvals ("always allow"), oldest first: tools whose calls run without a
   * `tool_approval` request, each granted by an answer `{ approved: true, always: 'session' }`, shared by every
   * branch, kept across restarts (see {@link revokeApproval}), as this object last loaded or wrote them.
   * @example
   * ```ts
   * session.approvalGrants.map((g) => g.toolName); // ['refund']
   * ```
   */
  get approvalGrants(): readonly ApprovalGrant[] {
    return approvalGrantsOf(this.#runtime.state.session);
  }

  /**
   * The branch's committed history as this object holds it, oldest first (fork parents included): the whole
   * branch, or, when model inputs keep a bounded history (the workflow's `historyWindow`, or working memory's
   * token budget), the newest part opening read (at least what agents are sent); older: {@link history}. Read-only.
   */
  get messages(): readonly Message[] {
    return this.#runtime.history.messages;
  }

  /**
   * The branch's stored messages in a range, read from the store (fork parents included), oldest
   * first: `{ fromSeq?, throughSeq? }` (inclusive) and/or `{ last }` (the newest `last`, counted
   * from `throughSeq` or from the newest message this object knows).
   * @throws {InvalidInputError} for a bound or count that is not an integer ≥ 1
   * @example
   * ```ts
   * const recent = await session.readMessages({ last: 20 });
   * const firstTurn = await session.readMessages({ fromSeq: 1, throughSeq: 6 });
   * ```
   */
  readMessages(range: HistoryRange = {}): Promise<Message[]> {
    return readRange(this.#runtime, range);
  }

  /**
   * Every stored message of the branch, oldest first, read lazily: one store read per page
   * (`pageSize`, default 500 messages), the next only when the loop goes on; a `break` reads no more.
   * @throws {InvalidInputError} for a `pageSize` that is not an integer ≥ 1
   * @example
   * ```ts
   * for await (const message of session.history()) if (message.role === 'user') console.log(message.content);
   * ```
   */
  history(options: HistoryPagesOptions = {}): AsyncIterable<Message> {
    return historyPages(this.#runtime, options);
  }

  /** The agent that acts next. */
  get activeAgent(): string {
    return this.#runtime.snapshot.context.activeAgent;
  }

  /**
   * The branch's latest turn number (1 for the first, 0 before any), as `turn.started`/`turn.completed`
   * carry it: a message sent while no `user_input` request waits starts `turn + 1`; an answer continues `turn`.
   */
  get turn(): number {
    return this.#runtime.snapshot.context.turn;
  }

  /** The routing machine's state: `idle`, `running` (a turn was interrupted), `awaitingRequest` or `closed`. */
  get routingState(): RoutingStateValue {
    return routingState(this.#runtime.snapshot);
  }

  /**
   * Sends the user's text (or several messages the user sent in a row, committed together as one
   * turn's start). An interrupted turn is finished first; while exactly one `user_input` request is
   * pending, the text answers it (several messages are joined with newlines). With `assets`
   * (references from {@link HandoffSession.attach}), each user message keeps them in `metadata.assets`.
   * @returns the turn's {@link TurnStream}: iterate it for events, or `await` it for the `TurnResult`; nothing runs until one of the two
   * @example
   * ```ts
   * const { message, pendingRequests } = await session.send('I was charged twice');
   * ```
   * @throws {SessionClosedError} when the session is closed; {@link InvalidInputError} when an approval is pending (use `respond`),
   *   for `assets` that are not references of this session's assets, or with `assets` while a `user_input` request waits
   */
  send(text: string | readonly string[], options: SendOptions = {}): TurnStream {
    const { assets, ...turn } = options;
    return this.#locked(() =>
      sendText(this.#runtime, text, turnCall(turn), assetsMetadata(this.#runtime.sessionId, assets)),
    );
  }

  /**
   * The session's assets: files uploaded to it (see `AssetStore`), stored by reference beside the
   * session in the workflow's store, and deleted with it (and by `eraseUser`).
   * @throws {ConfigurationError} when the workflow's store keeps no assets
   * @example
   * ```ts
   * for (const ref of await session.assets.list()) console.log(ref.name, ref.size);
   * ```
   */
  get assets(): SessionAssets {
    return sessionAssets(this.#runtime.config.store, this.#runtime.sessionId, this.#runtime.scope);
  }

  /**
   * Uploads a file the user gave (a receipt photo, a PDF) to this session and returns its
   * reference, to send with a message (`send(text, { assets: [ref] })`); a tool reads the bytes
   * with `context.assets.get(ref.id)`. The same as `session.assets.put(input)`.
   * @param input `{ name, contentType, bytes | stream }`
   * @returns the `AssetRef`: `{ id, sessionId, name, contentType, size, sha256, createdAt }`
   * @throws {AssetTooLargeError} past the store's `maxAssetBytes`; {@link InvalidInputError} for a bad
   *   name, content type or content; {@link ConfigurationError} when the store keeps no assets
   * @example
   * ```ts
   * const receipt = await session.attach({ name: 'receipt.png', contentType: 'image/png', bytes: await readFile('receipt.png') });
   * await session.send('Here is my receipt', { assets: [receipt] });
   * ```
   */
  async attach(input: PutAssetInput): Promise<AssetRef> {
    return this.assets.put(input);
  }

  /**
   * Answers a pending request: text for `user_input`; `{ approved: true }` (optionally with edited
   * `arguments`, and `always: 'session'` to allow the tool for the rest of the session: see
   * {@link approvalGrants}) or `{ approved: false, reason }` for `tool_approval`. Each answer is durable
   * at once; the step continues when all its requests are answered.
   * @returns the turn's {@link TurnStream} (iterate or await it)
   * @throws {NotFoundError} for an unknown request id; {@link InvalidInputError} for an answer of the wrong kind
   */
  respond(requestId: string, answer: RequestAnswer, options: TurnOptions = {}): TurnStream {
    return this.#locked(() => respondTo(this.#runtime, requestId, answer, turnCall(options)));
  }

  /**
   * Revokes the session's standing approval of `toolName` (given by `respond(id, { approved: true,
   * always: 'session' })`): its next call asks for approval again. Durable when it resolves, for
   * every branch of the session; calls that already ran keep their record (`metadata.approvalGrant`).
   * @returns whether the session held a grant for `toolName` (`false`: nothing to revoke)
   * @throws {InvalidInputError} for a tool name that is not a non-empty string; `ConcurrencyError`
   *   when another process changed the session since it was loaded (nothing changed; call again)
   * @example
   * ```ts
   * await session.revokeApproval('refund'); // true; the next refund asks again
   * ```
   */
  revokeApproval(toolName: string): Promise<boolean> {
    const runtime = this.#runtime;
    return withSessionLock(runtime, this.#host.locks, () => revokeApproval(runtime, toolName));
  }

  /** Finishes a turn interrupted by a crash, a failure or a cancellation; yields nothing when there is none. */
  resume(options: TurnOptions = {}): TurnStream {
    return this.#locked(() => resumeUnfinished(this.#runtime, turnCall(options)));
  }

  /**
   * Gives up the unfinished turn (interrupted, cancelled, or paused on requests) instead of resuming
   * it: open tool calls get a result ("Discarded" unless the step had finished them), pending requests
   * are dropped, and the next `send` starts a fresh turn. Nothing stored is removed.
   *
   * @throws {InvalidInputError} when no turn is unfinished; {@link SessionClosedError} when the session is closed
   * @example
   * ```ts
   * if (session.routingState !== 'idle') await session.discard(); // start over instead of finishing it
   * ```
   */
  discard(): Promise<void> {
    const runtime = this.#runtime;
    return withSessionLock(runtime, this.#host.locks, async () => {
      assertOpen(runtime);
      await discardTurn(runtime);
    });
  }

  /**
   * Closes the session: pending requests are cancelled (their tool calls get a result), context
   * providers' `onSessionClose` run once (e.g. memory saves the episode). Closing twice is a no-op.
   */
  async close(options: { reason?: string } = {}): Promise<void> {
    const reason = options.reason ?? 'closed';
    for await (const _ of withSession(this.#runtime, this.#host.locks, () => closeSession(this.#runtime, reason))) {
      // events of a close outside a turn are not streamed
    }
  }

  /**
   * Forks this branch at `atSeq`: the new branch refers to the first `atSeq` messages (nothing is
   * copied) and then runs on its own. It sees the world as of `atSeq`, as a fork from a checkpoint
   * does in LangGraph: its routing state is replayed from those messages, and its branch state is
   * the state as of `atSeq`, rebuilt from the state changes the runtime logs on each message
   * (`metadata.statePatches`, see `branchStateAt` in `@baton/core`). Session-scoped state is shared
   * by all branches and is not forked.
   *
   * @param options `{ atSeq, branchId, state? }`; `atSeq` from 0 to the head seq, not between a tool
   *   call and its result; `state` sets the new branch's state instead (needed when this branch's
   *   state was changed outside the runtime, so its messages do not tell its past states)
   * @returns a session object on the new branch
   * @throws {InvalidInputError} for a seq past the head or one that splits tool calls from their results,
   *   or when the state as of `atSeq` cannot be known (this branch's state was changed by other means
   *   than its turns) and no `state` is given; `ConcurrencyError` when the branch id exists
   * @example
   * ```ts
   * const retry = await session.fork({ atSeq: 4, branchId: 'retry' }); // state as it was after message 4
   * ```
   */
  async fork(options: { atSeq: number; branchId: string; state?: State }): Promise<HandoffSession> {
    const runtime = this.#runtime;
    await withSessionLock(runtime, this.#host.locks, () => forkAt(runtime, options));
    return this.#host.openBranch(runtime.sessionId, options.branchId, runtime.tenantId);
  }

  /**
   * Goes back to checkpoint `checkpointId` of this branch and takes another path from there, on a
   * new branch (nothing of this branch changes or is lost): the new branch refers to the messages the
   * checkpoint covers, starts from the branch state and routing state of that moment, and keeps its
   * unfinished work as it was saved — a turn paused on an approval there is paused again and can be
   * answered differently; what happened after the checkpoint on this branch (tools that finished
   * later, answers) is done again on the new one. Where `fork({ atSeq })` starts a branch
   * between turns, `rewind` starts it at any checkpoint, mid-turn included.
   *
   * @param options `{ branchId }`: the new branch's id
   * @returns a session object on the new branch
   * @throws {NotFoundError} when this branch has no such checkpoint (see `checkpoints()`);
   *   `ConcurrencyError` when the branch id exists; `CheckpointCorruptError` when the checkpoint is damaged
   * @example
   * ```ts
   * const [paused] = (await session.checkpoints()).filter((c) => c.throughSeq === 4);
   * const other = await session.rewind(paused!.id, { branchId: 'reject-instead' });
   * for await (const _ of other.respond(other.pendingRequests[0]!.id, { approved: false, reason: 'too much' })) {}
   * ```
   */
  async rewind(checkpointId: string, options: { branchId: string }): Promise<HandoffSession> {
    const runtime = this.#runtime;
    await withSessionLock(runtime, this.#host.locks, () => rewindTo(runtime, checkpointId, options.branchId));
    return this.#host.openBranch(runtime.sessionId, options.branchId, runtime.tenantId);
  }

  /** Every branch of the session. */
  branches(): Promise<Branch[]> {
    return this.#runtime.config.store.listBranches(this.#runtime.sessionId, this.#runtime.scope);
  }

  /**
   * Deletes a branch of this session with its messages and checkpoints.
   * @throws {BranchHasChildrenError} when forks refer to it and `recursive` is not set; {@link InvalidInputError} for `main`
   */
  deleteBranch(branchId: string, options: { recursive?: boolean } = {}): Promise<void> {
    return this.#runtime.config.store.deleteBranch(this.#runtime.sessionId, branchId, {
      ...options,
      ...this.#runtime.scope,
    });
  }

  /** The branch's checkpoint manifest (id, parentId, step, throughSeq, createdAt), oldest first. */
  checkpoints(): Promise<CheckpointManifestEntry[]> {
    return this.#runtime.config.store.listCheckpoints(
      this.#runtime.sessionId,
      this.#runtime.branchId,
      this.#runtime.scope,
    );
  }

  /**
   * Deletes checkpoint `id` of this branch (e.g. one holding data that must go); the branch's newest
   * checkpoint is where a paused turn resumes, so it is refused.
   * @returns whether the branch had it
   * @throws `CheckpointInUseError` for the branch's newest checkpoint
   * @example
   * ```ts
   * const [oldest] = await session.checkpoints();
   * await session.deleteCheckpoint(oldest!.id); // true
   * ```
   */
  deleteCheckpoint(id: string): Promise<boolean> {
    const runtime = this.#runtime;
    return withSessionLock(
      runtime,
      this.#host.locks,
      () => runtime.config.store.deleteCheckpoint(runtime.sessionId, runtime.branchId, id, runtime.scope),
      { load: false },
    );
  }

  /** Saves a checkpoint now (for `'manual'` checkpoints). */
  checkpoint(): Promise<CheckpointManifestEntry> {
    const runtime = this.#runtime;
    // Outside a turn nobody streams the checkpoint event.
    return withSessionLock(runtime, this.#host.locks, () => saveCheckpoint(runtime));
  }

  /**
   * Explicit recovery: loads checkpoint `checkpointId` of this branch (e.g. when the newest one is
   * damaged), replays the history committed after it, and saves the result as the newest checkpoint.
   * To go back in time instead, `fork({ atSeq: checkpoint.throughSeq, … })`.
   *
   * @throws {NotFoundError} when the branch has no such checkpoint; {@link CheckpointCorruptError} when it is damaged too
   */
  async restore(checkpointId: string): Promise<void> {
    const runtime = this.#runtime;
    await withSessionLock(runtime, this.#host.locks, () => restoreCheckpoint(runtime, checkpointId), { load: false });
  }

  /** A turn's stream under the session's lock (see {@link lockedTurn}). */
  #locked(body: () => AsyncGenerator<BatonEvent, void>): TurnStream {
    return lockedTurn(this.#runtime, this.#host.locks, body);
  }
}
