import { AGENT_CARD_PATH, type AgentCard } from '@a2a-js/sdk';
import { DefaultRequestHandler } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import type { HandoffWorkflow } from '@baton/handoff';
import express, { type Express } from 'express';
import { A2AThreadStore } from './a2aThreadStore.js';
import { type WorkflowAgentCardOptions, workflowAgentCard } from './agentCard.js';
import { WorkflowA2AExecutor } from './workflowA2AExecutor.js';

/** What {@link a2aRequestHandler} and {@link a2aApp} take. */
export interface A2AServeOptions extends WorkflowAgentCardOptions {
  /** The agent card to serve instead of the one built from the participants. */
  agentCard?: AgentCard;
  /** Finished A2A tasks kept in the thread store (default 1,000; see {@link A2AThreadStore}). */
  keepFinishedTasks?: number;
  /** Who the caller is, from the HTTP request (default: no authentication). */
  userBuilder?: UserBuilder;
}

/**
 * The SDK's `DefaultRequestHandler` for a workflow: its agent card, a {@link WorkflowA2AExecutor}
 * and an {@link A2AThreadStore} in the workflow's store (so tasks and the context → session map
 * survive a restart). Mount it on any of the SDK's transports (JSON-RPC, REST, gRPC).
 * @example
 * ```ts
 * import { a2aRequestHandler } from '@baton/a2a';
 * import { restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
 * const requestHandler = a2aRequestHandler(desk, { url });
 * app.use('/rest', restHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
 * ```
 */
export function a2aRequestHandler(workflow: HandoffWorkflow, options: A2AServeOptions): DefaultRequestHandler {
  const card = options.agentCard ?? workflowAgentCard(workflow, options);
  const tasks = new A2AThreadStore({
    store: workflow.config.store,
    agentId: workflow.name,
    ...(options.keepFinishedTasks === undefined ? {} : { keepFinishedTasks: options.keepFinishedTasks }),
  });
  return new DefaultRequestHandler(card, tasks, new WorkflowA2AExecutor(workflow, tasks));
}

/**
 * An Express app serving a workflow as an A2A agent: the agent card at
 * `/.well-known/agent-card.json` and JSON-RPC at `/` (A2A 1.0 `SendMessage`,
 * `SendStreamingMessage`, `GetTask`, `CancelTask`, …, and with `legacyCompat` the 0.3 names
 * `message/send`, `message/stream`, `tasks/get`, `tasks/cancel`). `url` must be where `/` is served.
 * @example
 * ```ts
 * import { a2aApp } from '@baton/a2a';
 * a2aApp(desk, { url: 'http://127.0.0.1:4000/' }).listen(4000, '127.0.0.1');
 * // a client: new ClientFactory().createFromUrl('http://127.0.0.1:4000')
 * ```
 */
export function a2aApp(workflow: HandoffWorkflow, options: A2AServeOptions): Express {
  const requestHandler = a2aRequestHandler(workflow, options);
  const legacyCompat = { enabled: options.legacyCompat ?? true };
  const app = express();
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler, legacyCompat }));
  app.use(
    '/',
    jsonRpcHandler({ requestHandler, userBuilder: options.userBuilder ?? UserBuilder.noAuthentication, legacyCompat }),
  );
  return app;
}
