import { a2aApp } from '@baton/a2a';
import type { HandoffWorkflow } from '@baton/handoff';
import type { Authenticate } from '@baton/server';
import { aguiRoutes } from '@baton/server/ag-ui';
import { mcpRoutes } from '@baton/server/mcp';
import type { HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import express, { type Express } from 'express';
import type { Hono } from 'hono';

/** Options of {@link mountAgentProtocols}. */
export interface AgentProtocolOptions {
  /** The workflow every protocol talks to (its store keeps the sessions). */
  workflow: HandoffWorkflow;
  /** The auth hook of the AG-UI, MCP and A2A routes (as `createBatonApp`'s): a refused request gets 401. */
  authenticate?: Authenticate;
  /** The server's base URL (e.g. `http://127.0.0.1:8787`), read on the first A2A request: the agent card names it. */
  baseUrl: () => string;
}

/**
 * Mounts a workflow on a Hono app (served by `@hono/node-server`, e.g. `serveBaton`) over the agent
 * protocols, next to its REST API:
 *
 * - **AG-UI** at `POST /ag-ui` (`aguiRoutes`): a run per turn, thread id = session id, approvals as interrupts;
 * - **MCP** (Streamable HTTP) at `/mcp` (`mcpRoutes`): tools `<workflow>` and `<workflow>_respond`;
 * - **A2A** at `/a2a/` (`@baton/a2a`'s Express app, handed Node's request and response): agent card at
 *   `/a2a/.well-known/agent-card.json` (public), JSON-RPC at `/a2a/` (with `authenticate`); `contextId` =
 *   conversation, a context and its tasks are the caller's only, approvals are `input-required`.
 *
 * @param app the Hono app (its `c.env` must be `@hono/node-server`'s `{ incoming, outgoing }` for A2A)
 * @param options `{ workflow, authenticate?, baseUrl }`
 * @example
 * ```ts
 * const app = new Hono<{ Bindings: HttpBindings }>();
 * let url = '';
 * mountAgentProtocols(app, { workflow: desk, authenticate, baseUrl: () => url });
 * url = (await serveBaton(app, { port: 8787 })).url;
 * // A2A: new ClientFactory().createFromUrl(`${url}/a2a/`)
 * ```
 */
export function mountAgentProtocols(app: Hono<{ Bindings: HttpBindings }>, options: AgentProtocolOptions): void {
  const { workflow, authenticate } = options;
  const auth = authenticate === undefined ? {} : { authenticate };
  app.route('/ag-ui', aguiRoutes({ workflow, ...auth }));
  app.route('/mcp', mcpRoutes({ workflow, ...auth }));
  // One A2A app per server (it holds the running tasks' event buses), made once the URL is known.
  let a2a: Express | undefined;
  app.all('/a2a/*', (c) => {
    a2a ??= express().use('/a2a', a2aApp(workflow, { url: `${options.baseUrl()}/a2a/`, ...auth }));
    a2a(c.env.incoming, c.env.outgoing);
    return RESPONSE_ALREADY_SENT;
  });
}
