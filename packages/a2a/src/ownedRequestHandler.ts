import type { Message, SendMessageRequest, StreamResponse, Task } from '@a2a-js/sdk';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { DefaultRequestHandler, type ServerCallContext } from '@a2a-js/sdk/server';
import { principalOf } from './a2aPrincipal.js';
import type { A2AThreadStore } from './a2aThreadStore.js';
import type { WorkflowA2AExecutor } from './workflowA2AExecutor.js';

/**
 * The SDK's `DefaultRequestHandler` with contexts owned by their callers: a message whose
 * `contextId` another user or tenant started is refused with the SDK's `TaskNotFoundError`
 * (JSON-RPC -32001; A2A has no error of its own for a context), before any task is made or stored.
 * Tasks are checked by the thread store (`load` with the call's context). Built by `a2aRequestHandler`.
 * @example
 * ```ts
 * import { A2AThreadStore, OwnedRequestHandler, WorkflowA2AExecutor, workflowAgentCard } from '@baton/a2a';
 * const tasks = new A2AThreadStore({ store: desk.config.store, agentId: desk.name });
 * const handler = new OwnedRequestHandler(workflowAgentCard(desk, { url }), tasks, new WorkflowA2AExecutor(desk, tasks));
 * ```
 */
export class OwnedRequestHandler extends DefaultRequestHandler {
  readonly #tasks: A2AThreadStore;

  constructor(
    card: ConstructorParameters<typeof DefaultRequestHandler>[0],
    tasks: A2AThreadStore,
    executor: WorkflowA2AExecutor,
  ) {
    super(card, tasks, executor);
    this.#tasks = tasks;
  }

  /** `SendMessage`, refused with `TaskNotFoundError` in another caller's context. */
  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    await this.#assertContext(params, context);
    return super.sendMessage(params, context);
  }

  /** `SendStreamingMessage`, refused with `TaskNotFoundError` in another caller's context. */
  override async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    await this.#assertContext(params, context);
    yield* super.sendMessageStream(params, context);
  }

  async #assertContext(params: SendMessageRequest, context: ServerCallContext): Promise<void> {
    const contextId = params.message?.contextId;
    if (contextId === undefined || contextId === '') return;
    if (await this.#tasks.mayUseContext(contextId, principalOf(context))) return;
    throw new TaskNotFoundError(
      `Context ${JSON.stringify(contextId)} not found; start a new conversation without a contextId.`,
    );
  }
}
