import { type Message as A2AMessage, type Part, TaskState } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { AbortedError, InvalidInputError, isValidId, type Message, type Request } from '@baton/core';
import type { HandoffSession, HandoffWorkflow, RequestAnswer } from '@baton/handoff';
import { agentMessage, dataOf, textOf, textPart } from './a2aMessages.js';
import { type A2APrincipal, principalOf, scopeOf } from './a2aPrincipal.js';
import type { A2AThreadStore, BatonTaskMetadata } from './a2aThreadStore.js';
import { replyArtifact } from './a2aThreadStore.js';
import { approvalFromParts } from './approvalAnswer.js';
import { askedAgain, type PendingRequestSummary, requestMessage, storedForm, type TaskInput } from './taskHistory.js';

/**
 * The A2A side of a served workflow (the SDK's `AgentExecutor`): each A2A message runs one Baton
 * turn in the session of its context (`workflow.session({ conversationId: contextId })`). A
 * message of a task in `input-required` answers the request the turn waits on (text for a
 * question; `yes` / `no …` or data `{ approved }` for an approval). A turn ends the task
 * `completed` (the turn's last assistant message as the status message, the same message as its
 * `working` update, and a `reply` artifact; a turn that said nothing says so, naming why the
 * conversation closed when an agent closed it) or `input-required` (the pending request's prompt,
 * and the request as data). Each committed agent message is a `working` status update while the
 * turn runs. The task event of each message carries it as sent (`metadata.baton.input`), so the
 * thread store keeps it in the task's history. Cancelling a running task aborts its turn;
 * cancelling one that waits discards the waiting turn (`session.discard()`). The session of a
 * context is the caller's (`ServerCallContext.user`, see `principalOf`): created with its
 * `userId` and `tenantId`, every store call scoped to its tenant; a context whose session is
 * another user's or tenant's (made outside A2A) ends the task `rejected`, naming nothing of it.
 *
 * Built by {@link a2aRequestHandler}; use it directly to mount the workflow on another transport.
 * @example
 * ```ts
 * import { A2AThreadStore, WorkflowA2AExecutor } from '@baton/a2a';
 * const tasks = new A2AThreadStore({ store, agentId: desk.name });
 * const executor = new WorkflowA2AExecutor(desk, tasks);
 * ```
 */
export class WorkflowA2AExecutor implements AgentExecutor {
  readonly #workflow: HandoffWorkflow;
  readonly #tasks: A2AThreadStore;
  readonly #running = new Map<string, AbortController>();

  constructor(workflow: HandoffWorkflow, tasks: A2AThreadStore) {
    this.#workflow = workflow;
    this.#tasks = tasks;
  }

  /**
   * Runs the turn of one A2A message and publishes its task's events on `bus` (first the task).
   * @throws what the turn throws besides a cancellation (the SDK then fails the task)
   */
  execute = async (context: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId } = context;
    const sessionId = this.#sessionId(contextId);
    const incoming = context.userMessage;
    if (sessionId === undefined) {
      return this.#refuse(
        bus,
        context,
        `contextId ${JSON.stringify(contextId)} is not usable as a Baton session id ` +
          '(letters, digits, _ : . - up to 100 characters); start the conversation without one or use a UUID.',
      );
    }
    const session = await this.#open(contextId, principalOf(context.context));
    if (session === undefined) {
      return this.#refuse(
        bus,
        context,
        `contextId ${JSON.stringify(contextId)} is not available; ` +
          'start the conversation without one or use a new UUID.',
      );
    }
    const existing = context.task?.metadata?.baton as BatonTaskMetadata | undefined;
    const fromSeq = existing?.fromSeq ?? (session.messages.at(-1)?.seq ?? 0) + 1;
    const baton: BatonTaskMetadata = { sessionId: session.id, fromSeq };
    // The client's message as sent, recorded with the task (an answer is a tool result in the session).
    const answering = context.task === undefined ? undefined : session.pendingRequests[0];
    const input: TaskInput = {
      ...storedForm(incoming),
      afterSeq: session.messages.at(-1)?.seq ?? 0,
      ...(answering === undefined ? {} : { request: summary(answering) }),
    };
    bus.publish(
      AgentEvent.task({
        id: taskId,
        contextId,
        status: {
          state: context.task === undefined ? TaskState.TASK_STATE_SUBMITTED : TaskState.TASK_STATE_WORKING,
          message: undefined,
          timestamp: now(),
        },
        artifacts: [],
        history: [],
        metadata: { baton: { ...baton, input } },
      }),
    );
    const pending = session.pendingRequests[0];
    if (pending !== undefined && context.task === undefined) {
      const owner = (await this.#tasks.tasksOf(contextId)).findLast((t) => t.request?.id === pending.id);
      if (owner !== undefined && owner.state === TaskState.TASK_STATE_CANCELED) await session.discard();
      else if (owner !== undefined) {
        return this.#finish(bus, context, TaskState.TASK_STATE_REJECTED, [
          textPart(
            `Task ${owner.id} of this context waits for an answer (${pending.type}); ` +
              `send the answer with taskId ${JSON.stringify(owner.id)}, or cancel that task first.`,
          ),
        ]);
      }
    }
    const text = textOf(incoming.parts);
    let answer: RequestAnswer | undefined;
    const waiting = session.pendingRequests[0];
    if (waiting !== undefined) {
      answer = answerFor(waiting, incoming.parts, text);
      if (answer === undefined) {
        const request = summary(waiting);
        const again = askedAgain(request, { contextId, taskId }, incoming.messageId);
        return this.#status(bus, context, TaskState.TASK_STATE_INPUT_REQUIRED, again, { ...baton, request });
      }
    } else if (text.trim() === '') {
      return this.#finish(bus, context, TaskState.TASK_STATE_REJECTED, [
        textPart('The message has no text part; send the request as text.'),
      ]);
    }

    this.#status(bus, context, TaskState.TASK_STATE_WORKING, undefined, baton);
    const abort = new AbortController();
    this.#running.set(taskId, abort);
    try {
      const stream =
        waiting !== undefined && answer !== undefined
          ? session.respond(waiting.id, answer, { signal: abort.signal })
          : session.send(text, { signal: abort.signal });
      let last: Message | undefined;
      let closed: string | undefined;
      for await (const event of stream) {
        if (event.type === 'session.closed') closed = event.reason;
        if (event.type !== 'message' || event.message.role !== 'assistant' || event.message.content === '') continue;
        last = event.message;
        this.#status(bus, context, TaskState.TASK_STATE_WORKING, said(last, context), baton);
      }
      this.#settle(bus, context, session, baton, last, closed);
    } catch (error) {
      if (!(error instanceof AbortedError)) throw error;
      await session.discard();
      this.#finish(bus, context, TaskState.TASK_STATE_CANCELED, [textPart('The task was cancelled.')]);
    } finally {
      this.#running.delete(taskId);
    }
  };

  /** Cancels a task: aborts its running turn, or discards the turn it waits in, and publishes `canceled`. */
  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const running = this.#running.get(taskId);
    if (running !== undefined) return running.abort(new AbortedError(`A2A task ${taskId} was cancelled.`));
    const task = await this.#tasks.load(taskId);
    if (task === undefined) return;
    const session = await this.#open(task.contextId, (await this.#tasks.ownerOf(taskId)) ?? {});
    if (session !== undefined && session.pendingRequests.length > 0) await session.discard();
    const message = agentMessage('The task was cancelled.', { contextId: task.contextId, taskId });
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: task.contextId,
        status: { state: TaskState.TASK_STATE_CANCELED, message, timestamp: now() },
        metadata: {},
      }),
    );
    bus.finished();
  };

  /**
   * Ends the turn's task: `input-required` on a pending request, else `completed` with the answer:
   * the turn's last assistant message (the same message as its `working` update, so the SDK's
   * history holds it once), or, for a turn that said nothing, a note saying so (and why the
   * conversation closed, when an agent closed it).
   */
  #settle(
    bus: ExecutionEventBus,
    context: RequestContext,
    session: HandoffSession,
    baton: BatonTaskMetadata,
    last: Message | undefined,
    closed: string | undefined,
  ): void {
    const { taskId, contextId } = context;
    const waiting = session.pendingRequests[0];
    if (waiting !== undefined) {
      const request = summary(waiting);
      this.#status(bus, context, TaskState.TASK_STATE_INPUT_REQUIRED, requestMessage(request, { contextId, taskId }), {
        ...baton,
        request,
      });
      return;
    }
    if (last === undefined) {
      const note =
        closed === undefined
          ? 'The turn ended without a reply from the agents.'
          : `The conversation was closed without a reply (${closed}).`;
      this.#finish(bus, context, TaskState.TASK_STATE_COMPLETED, [textPart(note)], baton);
      return;
    }
    const done = { ...baton, replySeq: last.seq };
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: replyArtifact(taskId, last.content),
        append: false,
        lastChunk: true,
        metadata: { baton: done },
      }),
    );
    this.#status(bus, context, TaskState.TASK_STATE_COMPLETED, said(last, context), done);
  }

  #status(
    bus: ExecutionEventBus,
    context: RequestContext,
    state: TaskState,
    message: A2AMessage | undefined,
    baton: BatonTaskMetadata,
  ): void {
    bus.publish(
      AgentEvent.statusUpdate({
        taskId: context.taskId,
        contextId: context.contextId,
        status: { state, message, timestamp: now() },
        metadata: { baton },
      }),
    );
  }

  #finish(
    bus: ExecutionEventBus,
    context: RequestContext,
    state: TaskState,
    parts: Part[],
    baton?: BatonTaskMetadata,
  ): void {
    const message = agentMessage(parts, { contextId: context.contextId, taskId: context.taskId });
    bus.publish(
      AgentEvent.statusUpdate({
        taskId: context.taskId,
        contextId: context.contextId,
        status: { state, message, timestamp: now() },
        metadata: baton === undefined ? {} : { baton },
      }),
    );
  }

  /**
   * A refusal before the task touched any session: a `rejected` task that names the problem, kept
   * by the thread store (no session: `sessionId` `''`) so `GetTask` reads it back.
   */
  #refuse(bus: ExecutionEventBus, context: RequestContext, reason: string): void {
    const input: TaskInput = { ...storedForm(context.userMessage), afterSeq: 0 };
    bus.publish(
      AgentEvent.task({
        id: context.taskId,
        contextId: context.contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
        artifacts: [],
        history: [],
        metadata: { baton: { sessionId: '', fromSeq: 1, input } satisfies BatonTaskMetadata },
      }),
    );
    this.#finish(bus, context, TaskState.TASK_STATE_REJECTED, [textPart(reason)]);
  }

  /**
   * The session of a context for `principal` (created with its user and tenant), or `undefined`
   * when the workflow refuses it as another user's or tenant's.
   */
  async #open(contextId: string, principal: A2APrincipal): Promise<HandoffSession | undefined> {
    try {
      return await this.#workflow.session({
        conversationId: contextId,
        ...scopeOf(principal),
        ...(principal.userId === undefined ? {} : { userId: principal.userId }),
      });
    } catch (error) {
      if (error instanceof InvalidInputError) return undefined;
      throw error;
    }
  }

  #sessionId(contextId: string): string | undefined {
    try {
      const id = this.#workflow.sessionIdOf(contextId);
      return isValidId(id) ? id : undefined;
    } catch {
      return undefined;
    }
  }
}

/** The Baton answer a message gives to the pending request, or `undefined` when it gives none. */
function answerFor(request: Request, parts: readonly Part[], text: string): RequestAnswer | undefined {
  if (request.type === 'tool_approval') return approvalFromParts(parts);
  const data = dataOf(parts);
  if (text.trim() !== '') return text;
  return typeof data?.answer === 'string' ? data.answer : undefined;
}

function summary(request: Request): PendingRequestSummary {
  if (request.type === 'tool_approval') {
    return {
      id: request.id,
      type: request.type,
      agent: request.agent,
      prompt: `Approve ${request.toolName}?`,
      toolName: request.toolName,
      arguments: request.arguments,
    };
  }
  return { id: request.id, type: request.type, agent: request.agent, prompt: request.prompt };
}

/** The A2A message of an assistant message: its text, its Baton id as `messageId`, its agent in `metadata`. */
function said(message: Message, context: RequestContext): A2AMessage {
  return agentMessage(message.content, {
    contextId: context.contextId,
    taskId: context.taskId,
    messageId: message.id,
    metadata: { agent: message.agent },
  });
}

function now(): string {
  return new Date().toISOString();
}
