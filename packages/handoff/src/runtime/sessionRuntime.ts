import {
  type BatonEvent,
  type Branch,
  type Message,
  type PendingWrite,
  type Request,
  type Session,
  StateContainer,
  type TenantScope,
  type Tool,
} from '@baton/core';
import type { AnsweredRequest } from '../config/answeredRequest.js';
import type { HandoffConfig } from '../config/handoffTypes.js';
import { storedControl } from '../routing/replayHistory.js';
import type { RoutingDriver, RoutingPosition } from '../routing/routingDriver.js';
import { routingState } from '../routing/routingMachine.js';
import { agentTools } from './agentTools.js';
import { type LoadedBranch, readBranch } from './branchReader.js';
import type { HistoryView } from './historyView.js';
import { replayAfterCheckpoint } from './replayAfterCheckpoint.js';
import { restoreRouting } from './restoreRouting.js';
import type { WorkflowCore } from './workflowCore.js';

export type { WorkflowCore } from './workflowCore.js';

/** Shared by every session object of one workflow for one session branch: who wrote last (to spot stale copies). */
export interface SessionSlot {
  generation: number;
}

/** Work a load found left over: a finished turn whose state is not saved yet, or an `end_conversation` not yet applied. */
export interface Unsettled {
  persistState: boolean;
  endConversation?: string;
}

/** The newest checkpoint of a runtime: its id, step and, when the turn that saved it was traced, that turn's `traceparent`. */
export interface CheckpointPosition {
  id: string;
  step: number;
  traceparent?: string;
}

/**
 * The loaded state of one session branch: session and branch documents, the history in memory (read
 * once per load, then extended on commit), the routing actor, state, pending requests and writes,
 * and the newest checkpoint's position. Internal to the package; `HandoffSession` is its public face.
 * Its fields change only through its methods (a load, a stored write, a pause, a close); the turn
 * and the session read them.
 */
export class SessionRuntime {
  #session!: Session;
  #branch!: Branch;
  #history!: HistoryView;
  /** The routing machine (see `createRoutingDriver`). */
  #actor!: RoutingDriver;
  #state!: StateContainer;
  #pendingRequests: Request[] = [];
  readonly pendingWrites = new Map<string, PendingWrite>();
  #checkpoint: CheckpointPosition | undefined;
  /** Requests answered in this turn, by tool call id, until their tool result is committed (it records them: see answeredRequest.ts). */
  readonly answeredRequests = new Map<string, AnsweredRequest>();
  #traceparent: string | undefined;
  #unsettled: Unsettled = { persistState: false };
  /** When set, the next call reloads everything from the store first. */
  #stale = true;
  /** Where events raised outside an executor's stream go (the running turn's queue); dropped outside a turn. */
  #listener: ((event: BatonEvent) => void) | undefined;
  /** A session document read just before the first load, and the slot generation it was read at. */
  #preloaded: { session: Session; generation: number } | undefined;
  #generation = -1;
  readonly #tools = new Map<string, Tool[]>();

  constructor(
    readonly core: WorkflowCore,
    readonly slot: SessionSlot,
    readonly sessionId: string,
    readonly branchId: string,
    readonly tenantId: string | undefined,
  ) {}

  get config(): HandoffConfig {
    return this.core.config;
  }

  /** The session document as last loaded or written. */
  get session(): Session {
    return this.#session;
  }

  /** The branch document as last loaded or written. */
  get branch(): Branch {
    return this.#branch;
  }

  /** The branch's history held in memory; its newest messages may be committed but not stored yet ({@link HistoryView.unstored}). */
  get history(): HistoryView {
    return this.#history;
  }

  /** The routing machine (see `createRoutingDriver`). */
  get actor(): RoutingDriver {
    return this.#actor;
  }

  /** Session and branch state, with the patches of the unsettled turn. */
  get state(): StateContainer {
    return this.#state;
  }

  /** Requests the turn is paused on, oldest call first. */
  get pendingRequests(): readonly Request[] {
    return this.#pendingRequests;
  }

  /** The newest checkpoint: its id, step and, when the turn that saved it was traced, that turn's `traceparent`. */
  get checkpoint(): CheckpointPosition | undefined {
    return this.#checkpoint;
  }

  /** The W3C `traceparent` of the turn running now, when it is traced: saved into its checkpoints. */
  get traceparent(): string | undefined {
    return this.#traceparent;
  }

  /** Work a load found left over (see {@link Unsettled}). */
  get unsettled(): Readonly<Unsettled> {
    return this.#unsettled;
  }

  /** Whether the next call must reload everything from the store first. */
  get stale(): boolean {
    return this.#stale;
  }

  /** The tenant scope every store call of this session carries (`{}` for a session without a tenant). */
  get scope(): TenantScope {
    return this.tenantId === undefined ? {} : { tenantId: this.tenantId };
  }

  get snapshot(): RoutingPosition {
    return this.#actor.getSnapshot();
  }

  /** Whether another session object of this workflow wrote since this one loaded. */
  get outdated(): boolean {
    return this.#stale || this.slot.generation !== this.#generation;
  }

  /**
   * Gives the next {@link load} the session document the opener just read, so opening a session
   * reads it once. The load reads it again when another session object of this workflow wrote
   * since (`generation` is the slot's generation at the read).
   */
  preload(session: Session, generation: number): void {
    this.#preloaded = { session, generation };
  }

  /** Records that this runtime just wrote (other copies become outdated). */
  noteWrite(): void {
    this.slot.generation += 1;
    this.#generation = this.slot.generation;
  }

  /** Marks the runtime for a reload on the next call (a write failed, a turn failed or was left). */
  markStale(): void {
    this.#stale = true;
  }

  /** Takes the session and branch documents a store write returned as the current ones. */
  noteStored(stored: { session?: Session | undefined; branch?: Branch | undefined }): void {
    if (stored.session !== undefined) this.#session = stored.session;
    if (stored.branch !== undefined) this.#branch = stored.branch;
  }

  /** Makes a stored checkpoint the newest. */
  noteCheckpoint(checkpoint: CheckpointPosition): void {
    this.#checkpoint = checkpoint;
  }

  /** Sets (or clears) the `traceparent` of the turn running now. */
  traceTurn(traceparent: string | undefined): void {
    this.#traceparent = traceparent;
  }

  /** The finished turn's state is stored: nothing is left to settle. */
  noteSettled(): void {
    this.#unsettled.persistState = false;
  }

  /** The session is closed: nothing left over is to be applied. */
  noteClosed(): void {
    this.#unsettled = { persistState: false };
  }

  /** Pauses on `requests` (they replace the pending ones) and moves the routing machine to `awaitingRequest`. */
  awaitRequests(requests: Request[]): void {
    this.#pendingRequests = requests;
    this.#actor.send({ type: 'REQUEST' });
  }

  /**
   * Drops the pending requests `drop` selects (all without it), answered or given up.
   * @returns the dropped requests
   */
  dropRequests(drop: (request: Request) => boolean = () => true): Request[] {
    const dropped = this.#pendingRequests.filter(drop);
    if (dropped.length > 0) this.#pendingRequests = this.#pendingRequests.filter((request) => !drop(request));
    return dropped;
  }

  /**
   * Sends the events raised outside an executor's stream (a saved checkpoint, a refused handoff) to
   * `listener` (the running turn's queue) until the returned function is called, which gives them
   * back to the previous listener. Without a listener (outside a turn) nobody streams them.
   */
  listen(listener: (event: BatonEvent) => void): () => void {
    const previous = this.#listener;
    this.#listener = listener;
    return () => {
      this.#listener = previous;
    };
  }

  /** Raises an event outside an executor's stream: to the listener, if any (see {@link listen}). */
  raise(event: BatonEvent): void {
    this.#listener?.(event);
  }

  /** The tools the runtime adds for `agent` (see {@link agentTools}), made once per agent. */
  toolsFor(agent: string): Tool[] {
    let tools = this.#tools.get(agent);
    if (tools === undefined) {
      tools = agentTools(this.core, agent, this);
      this.#tools.set(agent, tools);
    }
    return tools;
  }

  /**
   * Loads the session branch from the store: documents, the newest checkpoint (or `checkpointId`),
   * the history, and replays messages committed after the checkpoint through the routing machine.
   * The history is the whole branch (one read), or, with a bounded model input (a `historyWindow`,
   * a first shaper's `maxHistoryMessages` or `olderHistoryNeeded`) and a checkpoint, only what that
   * bound and recovery need: the messages from `throughSeq − first page + 1` on (twice the window,
   * since agents do not see handoff calls and results, or the budget's first page), then older ones
   * read back in pages until the bound is met ({@link readBranch}).
   * What needs older messages later reads them then ({@link completeHistory}).
   *
   * @throws {NotFoundError} when the session, branch or checkpoint does not exist
   * @throws {CheckpointCorruptError} when the checkpoint's machine snapshot cannot be restored
   * @throws {ConfigurationError} when the checkpoint names an agent this workflow does not have
   */
  async load(checkpointId?: string): Promise<void> {
    // Until this load succeeds, the runtime must not be used as it was: a failed load leaves it to reload on the next call.
    this.#stale = true;
    const preloaded = this.#preloaded;
    this.#preloaded = undefined;
    const fresh =
      preloaded !== undefined && preloaded.generation === this.slot.generation ? preloaded.session : undefined;
    const loaded = await readBranch(this.config, this, checkpointId, fresh);
    const { session, checkpoint } = loaded;
    this.#install(loaded, restoreRouting(this.core, this.sessionId, checkpoint?.machine));
    const { pendingRequests, persistState, replayed } = replayAfterCheckpoint(
      {
        actor: this.#actor,
        state: this.#state,
        pendingRequests: this.#pendingRequests,
        pendingWrites: this.pendingWrites,
      },
      loaded,
    );
    this.#pendingRequests = pendingRequests;
    this.#unsettled.persistState = persistState;
    // A tool result ended the conversation (the machine is closed) but the session was not closed yet.
    if (session.status !== 'closed' && routingState(this.snapshot) === 'closed') {
      const ended = await this.findLastMessage(
        (m) => m.role === 'tool' && storedControl(m)?.kind === 'end_conversation',
      );
      this.#unsettled.endConversation = (ended && storedControl(ended)?.reason) ?? 'ended by agent';
    }
    if (session.status === 'closed' && routingState(this.snapshot) !== 'closed') this.#actor.send({ type: 'CLOSE' });
    this.#logRecovery(replayed);
    this.#stale = false;
    this.#generation = this.slot.generation;
  }

  /** Makes what a load read the runtime's state, as the checkpoint saved it. */
  #install(loaded: LoadedBranch, actor: RoutingDriver): void {
    const { session, branch, checkpoint, history } = loaded;
    this.#actor?.stop();
    this.#actor = actor;
    this.#session = session;
    this.#branch = branch;
    this.#history = history;
    this.#state = new StateContainer({ session: session.state, branch: branch.state });
    this.#pendingRequests = [...(checkpoint?.pendingRequests ?? [])];
    this.pendingWrites.clear();
    this.answeredRequests.clear();
    for (const write of checkpoint?.pendingWrites ?? []) this.pendingWrites.set(write.toolCallId, write);
    this.#checkpoint =
      checkpoint &&
      (checkpoint.traceparent === undefined
        ? { id: checkpoint.id, step: checkpoint.step }
        : { id: checkpoint.id, step: checkpoint.step, traceparent: checkpoint.traceparent });
    this.#unsettled = { persistState: false };
  }

  /**
   * Reads the branch's messages older than those held, once: after it `history.messages` is the whole
   * branch. Nothing is read when it already is (always, without a `historyWindow`).
   */
  async completeHistory(): Promise<void> {
    const history = this.history;
    if (history.complete) return;
    const throughSeq = history.firstSeq - 1;
    const older =
      throughSeq < 1
        ? []
        : await this.config.store.readMessages(this.sessionId, this.branchId, { ...this.scope, throughSeq });
    history.prepend(older, { complete: true });
  }

  /**
   * The newest message of the branch that satisfies `predicate`: searched in the messages held, then,
   * when none does and the history is not whole, in the older ones ({@link completeHistory}).
   */
  async findLastMessage(predicate: (message: Message) => boolean): Promise<Message | undefined> {
    const held = this.history.messages.length;
    const found = this.history.messages.findLast(predicate);
    if (found !== undefined || this.history.complete) return found;
    await this.completeHistory();
    const older = this.history.messages.length - held;
    for (let i = older - 1; i >= 0; i -= 1) if (predicate(this.history.messages[i]!)) return this.history.messages[i];
    return undefined;
  }

  /** Logs at `info` what a load found left over by a crash or another process: `replayed` messages after the checkpoint, unsettled work, an unfinished turn. */
  #logRecovery(replayed: number): void {
    const state = routingState(this.snapshot);
    const unsettled = this.unsettled.persistState || this.unsettled.endConversation !== undefined;
    if (!unsettled && state !== 'running' && this.pendingWrites.size === 0) return;
    this.config.logger.info(
      {
        sessionId: this.sessionId,
        branchId: this.branchId,
        checkpointId: this.checkpoint?.id,
        replayedMessages: replayed,
        finishedToolResults: this.pendingWrites.size,
        unfinishedTurn: state === 'running',
        unsettled,
      },
      'loaded a session with work left over',
    );
  }
}
