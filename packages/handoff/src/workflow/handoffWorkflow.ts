import {
  AmbiguousBranchError,
  addUsage,
  assertValidId,
  type BatonEvent,
  ConcurrencyError,
  createId,
  type EraseUserInput,
  type EraseUserResult,
  emptyUsage,
  InMemoryStore,
  InvalidIdError,
  InvalidInputError,
  MAIN_BRANCH,
  type MessageEvent,
  NotFoundError,
  type Session,
  type Tool,
} from '@baton/core';
import { handoffToolTemplate } from '../routing/handoffTools.js';
import {
  createRoutingMachine,
  persistsDirectly,
  type RoutingMachine,
  routingPersister,
} from '../routing/routingMachine.js';
import { HandoffSession, type SessionHost } from '../session/handoffSession.js';
import { SessionLock } from '../session/sessionLock.js';
import { withSessionLock } from '../session/sessionOperations.js';
import { SessionRuntime, type SessionSlot, type WorkflowCore } from '../runtime/sessionRuntime.js';
import { eraseUser } from './eraseUser.js';
import type {
  HandoffConfig,
  HandoffRunRequest,
  HandoffRunResult,
  SessionOptions,
  SessionTarget,
  TurnOptions,
} from '../config/handoffTypes.js';
import { handoffGraphToMermaid } from '../routing/mermaid.js';
import { modelInputShaper } from '../config/modelInputShaper.js';
import { WorkflowExecutor, type WorkflowExecutorOptions } from './workflowExecutor.js';
import { type WorkflowToolOptions, workflowTool } from './workflowTool.js';

/**
 * A built handoff workflow (from {@link HandoffBuilder}): opens sessions, runs one-off conversations,
 * draws its graph. All session objects it opens share one lock per session branch, so calls on the
 * same session never interleave in this process.
 *
 * @example
 * ```ts
 * const session = await workflow.session({ id: 'chat-81', userId: 'u-42' });
 * for await (const event of session.send('Where is my order?')) console.log(event.type);
 * ```
 */
export class HandoffWorkflow {
  /** The validated configuration the builder produced (participants, edges, policies, store, checkpoint options). */
  readonly config: HandoffConfig;
  readonly #core: WorkflowCore;
  readonly #locks = new SessionLock();
  readonly #slots = new Map<string, SessionSlot>();
  readonly #host: SessionHost;

  /** Prefer {@link HandoffBuilder}, which validates `config` first. */
  constructor(config: HandoffConfig) {
    this.config = config;
    const routing = {
      coordinator: config.coordinator,
      edges: config.edges,
      maxHandoffsPerTurn: config.maxHandoffsPerTurn,
      returnPolicyOf: (agent: string) => config.returnOverrides.get(agent) ?? config.returnPolicy,
    };
    const machine = createRoutingMachine(routing);
    this.#core = {
      config,
      routing,
      machine,
      persistRouting: routingPersister(machine),
      directRouting: persistsDirectly(machine),
      handoffTemplates: new Map([...config.participants.values()].map((p) => [p.name, handoffToolTemplate(p)])),
      // The window first, per model call (a long activation's own steps included), then the providers' shaping.
      prepareModelInput: modelInputShaper(config.contextProviders, config.historyWindow?.messages),
      outdateSession: (sessionId) => {
        for (const [key, slot] of this.#slots) if (key.startsWith(`${sessionId}\u0000`)) slot.generation += 1;
      },
    };
    this.#host = {
      locks: this.#locks,
      openBranch: (id, branch, tenantId) =>
        this.session(tenantId === undefined ? { id, branch } : { id, branch, tenantId }),
    };
  }

  /** The workflow's name. */
  get name(): string {
    return this.config.name;
  }

  /** The routing machine (XState v5), e.g. for Stately's visualiser or `createActor(machine, { snapshot })`. */
  get machine(): RoutingMachine {
    return this.#core.machine;
  }

  /**
   * The id under which this workflow stores its thread of conversation `conversationId`:
   * `<workflow name>:<conversationId>`. Two workflows with different names never share a session,
   * even on one store and one conversation id.
   *
   * @throws {InvalidIdError} when the result is not a valid session id (too long, or unsafe characters)
   * @example
   * ```ts
   * new HandoffBuilder({ name: 'billing-desk' }).participants(agent).build().sessionIdOf('chat-81'); // 'billing-desk:chat-81'
   * ```
   */
  sessionIdOf(conversationId: string): string {
    if (typeof conversationId !== 'string' || conversationId === '')
      throw new InvalidIdError('conversation', conversationId);
    return assertValidId('session', `${this.name}:${conversationId}`);
  }

  /** The stored id of the session `options` name. @throws {InvalidInputError} when they name it by both `id` and `conversationId`, or by neither */
  #sessionIdOf(options: SessionTarget): string {
    const { id, conversationId } = options as { id?: string; conversationId?: string };
    if ((id === undefined) === (conversationId === undefined)) {
      throw new InvalidInputError(
        `Open a session by its id or by its conversationId, exactly one of them; got ${JSON.stringify({ id, conversationId })}.`,
      );
    }
    return id ?? this.sessionIdOf(conversationId!);
  }

  /**
   * Opens a session: loads it when it exists (finishing nothing yet: an interrupted turn is resumed
   * by the next call or by `resume()`), creates it otherwise.
   *
   * @param options `{ id | conversationId, userId?, tenantId?, branch?, metadata?, checkpointId?, create? }`
   *   (by `conversationId`, the session is this workflow's thread of a conversation: see {@link sessionIdOf}); without
   *   `branch`, a session that has been forked is refused (which branch is meant?), one with only
   *   `main` opens it
   * @throws {InvalidIdError} for an unsafe id; {@link NotFoundError} for a missing branch, or for an
   *   unknown id with `create: false`; {@link AmbiguousBranchError} for a forked session opened
   *   without `branch`; {@link InvalidInputError} when the session belongs to another user or another
   *   tenant (every store call of the session carries `tenantId`, so no call can reach another tenant's data);
   *   {@link CheckpointCorruptError} when its newest checkpoint is damaged (open it with `checkpointId` to recover)
   */
  async session(options: SessionOptions): Promise<HandoffSession> {
    const { store } = this.config;
    const id = this.#sessionIdOf(options);
    const scope = options.tenantId === undefined ? {} : { tenantId: options.tenantId };
    const branchId = options.branch ?? MAIN_BRANCH;
    const key = `${id}\u0000${branchId}`;
    let slot = this.#slots.get(key);
    if (slot === undefined) {
      slot = { generation: 0 };
      this.#slots.set(key, slot);
    }
    // Writes by this workflow's other session objects after this read make it stale (see the load below).
    const generationAtRead = slot.generation;
    let existing: Session | undefined = await store.getSession(id, scope);
    if (existing === undefined && options.create === false) {
      throw new NotFoundError(`Session ${JSON.stringify(id)} does not exist (opened with create: false).`);
    }
    if (existing !== undefined && options.branch === undefined) {
      const branches = await store.listBranches(id, scope);
      if (branches.length > 1)
        throw new AmbiguousBranchError(
          id,
          branches.map((b) => b.id),
        );
    }
    if (existing === undefined) {
      try {
        await store.createSession({
          id: id,
          ...(options.tenantId === undefined ? {} : { tenantId: options.tenantId }),
          ...(options.userId === undefined ? {} : { userId: options.userId }),
          ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
        });
      } catch (error) {
        if (!(error instanceof ConcurrencyError)) throw error;
        existing = await store.getSession(id, scope);
        if (existing === undefined) {
          // The id exists, yet not for this tenant: refused like another user's session, and nothing of it is read.
          throw new InvalidInputError(
            `Session ${JSON.stringify(id)} belongs to another tenant than ${JSON.stringify(options.tenantId ?? null)}; use a new session id.`,
            {
              cause: error,
            },
          );
        }
      }
    }
    if (existing !== undefined && options.userId !== undefined) await this.#claimUser(existing, options.userId, scope);
    const runtime = new SessionRuntime(this.#core, slot, id, branchId, options.tenantId);
    // The first load reuses the session document just read instead of reading it again, unless the
    // user claim above may have changed it.
    if (existing !== undefined && (options.userId === undefined || existing.userId !== undefined))
      runtime.preload(existing, generationAtRead);
    const session = new HandoffSession(runtime, this.#host);
    if (options.checkpointId !== undefined) {
      await session.restore(options.checkpointId);
    } else {
      await withSessionLock(runtime, this.#locks, async () => undefined);
    }
    return session;
  }

  /**
   * Checks that an existing session is the user's; a session opened before its user was known is
   * given the user now (compare-and-set, so two openers cannot give it two users), so memory can
   * recall for it.
   * @throws {InvalidInputError} when the session belongs to another user
   */
  async #claimUser(session: Session, userId: string, scope: { tenantId?: string }): Promise<void> {
    let current: Session | undefined = session;
    while (current !== undefined && current.userId === undefined) {
      try {
        current = await this.config.store.updateSession(
          current.id,
          { userId },
          { ...scope, expectedVersion: current.version },
        );
      } catch (error) {
        if (!(error instanceof ConcurrencyError)) throw error;
        current = await this.config.store.getSession(session.id, scope);
      }
    }
    if (current !== undefined && current.userId !== userId) {
      throw new InvalidInputError(
        `Session ${JSON.stringify(session.id)} belongs to another user than ${JSON.stringify(userId)}; use a new session id.`,
      );
    }
  }

  /**
   * Runs one turn and collects it, in one of two forms:
   * - `run(input, options?)`: stateless, in a throwaway in-memory session (nothing is kept);
   * - `run({ sessionId, input, branch?, userId?, tenantId?, create?, signal?, …settings })`: loads the
   *   session (or creates it), finishes an interrupted turn first, runs the turn, persists it in the
   *   workflow's store, and returns it. Per-turn settings (`instructions`, `modelSettings`, `tools`)
   *   apply to this turn only.
   *
   * @returns the answer, the messages the call committed, requests it paused on, every event and the usage
   * @throws what {@link HandoffWorkflow.session} and `session.send` throw (e.g. `NotFoundError` with
   *   `create: false`, `AmbiguousBranchError`, `SessionClosedError`, `InvalidInputError` while an approval waits)
   * @example
   * ```ts
   * const { output, agent } = await workflow.run('I was charged twice for order 1234');
   * const turn = await workflow.run({ sessionId: 'chat-81', userId: 'u-42', input: ['hi', 'my order is late'], modelSettings: { temperature: 0 } });
   * ```
   */
  async run(input: string, options?: TurnOptions): Promise<HandoffRunResult>;
  async run(request: HandoffRunRequest): Promise<HandoffRunResult>;
  async run(input: string | HandoffRunRequest, options: TurnOptions = {}): Promise<HandoffRunResult> {
    if (typeof input === 'string') {
      const scratch = new HandoffWorkflow({ ...this.config, store: new InMemoryStore() });
      const session = await scratch.session({ id: createId() });
      return collectRun(session, input, options);
    }
    const { sessionId, conversationId, input: text, branch, userId, tenantId, create, ...turnOptions } = input;
    const sessionOptions: SessionOptions =
      sessionId !== undefined ? { id: sessionId } : { conversationId: conversationId! };
    if (branch !== undefined) sessionOptions.branch = branch;
    if (userId !== undefined) sessionOptions.userId = userId;
    if (tenantId !== undefined) sessionOptions.tenantId = tenantId;
    if (create !== undefined) sessionOptions.create = create;
    return collectRun(await this.session(sessionOptions), text, turnOptions);
  }

  /**
   * This workflow as one participant of another workflow: its agents run inside the outer turn and
   * commit to the outer session (stored once, no inner session); its requests are the outer
   * session's. See {@link WorkflowExecutor}.
   *
   * @param options `{ name?, description? }` of the participant (default: this workflow's name)
   * @returns an `Executor` to pass to the outer builder's `participants()`
   * @throws {ConfigurationError} when this workflow was built with options of its own sessions
   *   (`store()`, `checkpoints()`, `memory()`, `autonomous()`, `terminateWhen()`, `handoffHistory()`):
   *   the outer session's apply
   * @example
   * ```ts
   * const desk = new HandoffBuilder({ name: 'desk' }).participants(triage, billingTeam.asExecutor({ name: 'billing' })).coordinator(triage).build();
   * ```
   */
  asExecutor(options: WorkflowExecutorOptions = {}): WorkflowExecutor {
    return new WorkflowExecutor(this, options);
  }

  /**
   * This workflow as a tool an agent can call with `{ message }`; the result is the inner answer. Each
   * call runs in a throwaway session; a request raised inside ends the call with an error result.
   * See {@link workflowTool}.
   *
   * @param options `{ name, description }` of the tool
   * @example
   * ```ts
   * const askBilling = billingTeam.asTool({ name: 'ask_billing', description: 'Asks the billing team a question.' });
   * ```
   */
  asTool(options: WorkflowToolOptions): Tool<{ message: string }, string> {
    return workflowTool(this, options);
  }

  /**
   * Erases one user's data from this workflow's store (a right-to-be-forgotten request) and withdraws
   * what this workflow's participants queued outside it for that user's sessions: every pending
   * request, on every branch, is withdrawn first (a `HumanExecutor` removes its `HumanQueue` task,
   * which quotes the user's words), then `store.eraseUser` removes the sessions and episodes. Prefer
   * it to `store.eraseUser` when a participant queues work (a human operator's tasks). See {@link eraseUser}.
   *
   * @param input `{ tenantId?, userId }`
   * @returns the counts removed, per kind (`{ sessions, branches, messages, checkpoints, episodes }`)
   * @throws {InvalidIdError} for an unsafe id; {@link StoreError} when a session's pending requests
   *   could not be read (the data is erased, its queued tasks may remain); what the store or a
   *   participant's `withdrawRequests` throws (nothing is erased when a withdrawal fails)
   * @example
   * ```ts
   * const removed = await workflow.eraseUser({ tenantId: 'acme', userId: 'u-42' });
   * // { sessions: 2, branches: 3, messages: 41, checkpoints: 6, episodes: 2 }; no operator task of u-42 is left
   * ```
   */
  eraseUser(input: EraseUserInput): Promise<EraseUserResult> {
    const outdate = (sessionId: string) => this.#core.outdateSession(sessionId);
    return eraseUser(this.config.store, this.config.participants.values(), input, outdate);
  }

  /** The handoff graph as a Mermaid `flowchart LR`, the coordinator marked (see {@link handoffGraphToMermaid}). */
  toMermaid(): string {
    return handoffGraphToMermaid({
      participants: [...this.config.participants.keys()],
      coordinator: this.config.coordinator,
      edges: this.config.edges,
    });
  }
}

/** Sends `input` on `session`, collects the events, and returns what the call committed. */
async function collectRun(
  session: HandoffSession,
  input: string | readonly string[],
  options: TurnOptions,
): Promise<HandoffRunResult> {
  const before = session.messages.at(-1)?.seq ?? 0;
  const events: BatonEvent[] = [];
  let usage = emptyUsage();
  for await (const event of session.send(input, options)) {
    events.push(event);
    if (event.type === 'turn.completed') usage = addUsage(usage, event.usage);
  }
  const messages = session.messages.filter((m) => m.seq > before);
  const reply = messages.findLast((m) => m.role === 'assistant' && (m.toolCalls?.length ?? 0) === 0);
  const answered = events.find(
    (e): e is MessageEvent => reply !== undefined && e.type === 'message' && e.message.id === reply.id,
  );
  return {
    sessionId: session.id,
    output: reply?.content,
    agent: reply?.agent,
    structuredOutput: answered?.structuredOutput,
    messages,
    pendingRequests: session.pendingRequests,
    events,
    usage,
  };
}
