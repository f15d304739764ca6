import { AGENT_CARD_PATH, type AgentCard, type SecurityScheme } from '@a2a-js/sdk';
import type { DefaultRequestHandler } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import type { HandoffWorkflow } from '@baton/handoff';
import express, { type Express } from 'express';
import { type A2AAuthenticate, a2aAuthentication } from './a2aPrincipal.js';
import { A2AThreadStore } from './a2aThreadStore.js';
import { type WorkflowAgentCardOptions, workflowAgentCard } from './agentCard.js';
import { OwnedRequestHandler } from './ownedRequestHandler.js';
import { WorkflowA2AExecutor } from './workflowA2AExecutor.js';

/** What {@link a2aRequestHandler} and {@link a2aApp} take. */
export interface A2AServeOptions extends WorkflowAgentCardOptions {
  /** The agent card to serve instead of the one built from the participants. */
  agentCard?: AgentCard;
  /** Finished A2A tasks kept in the thread store (default 1,000; see {@link A2AThreadStore}). */
  keepFinishedTasks?: number;
  /**
   * The auth hook (the same as `@baton/server`'s `authenticate`): a request → `{ tenantId?, userId? }`;
   * `undefined` or a throw answers HTTP 401 before any JSON-RPC work. Each context and task is then
   * its caller's: another user or tenant gets `TaskNotFound`. The agent card declares `securitySchemes`
   * (default: HTTP bearer). Without it (the default) every caller shares one space (local demos).
   */
  authenticate?: A2AAuthenticate;
  /**
   * The SDK's way to say who calls (ignored when `authenticate` is given): an authenticated `User` is
   * the principal `{ userId: user.userName }` (no tenant), an unauthenticated one `{}`. Default: none.
   */
  userBuilder?: UserBuilder;
}

/** The bearer scheme a card declares for `authenticate` when it names none. */
const BEARER: Record<string, SecurityScheme> = {
  bearer: {
    scheme: {
      $case: 'httpAuthSecurityScheme',
      value: { scheme: 'Bearer', description: 'Authorization: Bearer <token>', bearerFormat: '' },
    },
  },
};

/**
 * The SDK's `DefaultRequestHandler` for a workflow: its agent card, a {@link WorkflowA2AExecutor}
 * and an {@link A2AThreadStore} in the workflow's store (so tasks and the context → session map
 * survive a restart). Mount it on any of the SDK's transports (JSON-RPC, REST, gRPC). Each context
 * and task belongs to the caller that started it (`ServerCallContext.user`, see `principalOf`):
 * another caller's task is `TaskNotFound`, and so is a message in another caller's context.
 * @example
 * ```ts
 * import { a2aAuthentication, a2aRequestHandler } from '@baton/a2a';
 * import { restHandler } from '@a2a-js/sdk/server/express';
 * const requestHandler = a2aRequestHandler(desk, { url, authenticate });
 * const auth = a2aAuthentication(authenticate);
 * app.use('/rest', auth.middleware, restHandler({ requestHandler, userBuilder: auth.userBuilder }));
 * ```
 */
export function a2aRequestHandler(workflow: HandoffWorkflow, options: A2AServeOptions): DefaultRequestHandler {
  const security =
    options.authenticate === undefined || options.securitySchemes !== undefined ? {} : { securitySchemes: BEARER };
  const card = options.agentCard ?? workflowAgentCard(workflow, { ...options, ...security });
  const tasks = new A2AThreadStore({
    store: workflow.config.store,
    agentId: workflow.name,
    ...(options.keepFinishedTasks === undefined ? {} : { keepFinishedTasks: options.keepFinishedTasks }),
  });
  return new OwnedRequestHandler(card, tasks, new WorkflowA2AExecutor(workflow, tasks));
}

/**
 * An Express app serving a workflow as an A2A agent: the agent card at
 * `/.well-known/agent-card.json` and JSON-RPC at `/` (A2A 1.0 `SendMessage`,
 * `SendStreamingMessage`, `GetTask`, `CancelTask`, …, and with `legacyCompat` the 0.3 names
 * `message/send`, `message/stream`, `tasks/get`, `tasks/cancel`). `url` must be where `/` is served.
 * With `authenticate`, JSON-RPC answers 401 to a request it refuses (the card stays public).
 * @example
 * ```ts
 * import { a2aApp } from '@baton/a2a';
 * const authenticate = (request: Request) => users.get(request.headers.get('authorization') ?? '');
 * a2aApp(desk, { url: 'http://127.0.0.1:4000/', authenticate }).listen(4000, '127.0.0.1');
 * // a client: new ClientFactory().createFromUrl('http://127.0.0.1:4000'), its fetch sending the header
 * ```
 */
export function a2aApp(workflow: HandoffWorkflow, options: A2AServeOptions): Express {
  const requestHandler = a2aRequestHandler(workflow, options);
  const legacyCompat = { enabled: options.legacyCompat ?? true };
  const app = express();
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler, legacyCompat }));
  if (options.authenticate !== undefined) {
    const auth = a2aAuthentication(options.authenticate);
    app.use('/', auth.middleware, jsonRpcHandler({ requestHandler, userBuilder: auth.userBuilder, legacyCompat }));
    return app;
  }
  const userBuilder = options.userBuilder ?? UserBuilder.noAuthentication;
  app.use('/', jsonRpcHandler({ requestHandler, userBuilder, legacyCompat }));
  return app;
}
