import { randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { Hono } from 'hono';
import type { Authenticate, Principal } from '../http/auth.js';
import { TurnRuns } from '../streaming/turnRuns.js';
import { type BatonMcpOptions, batonMcpServer } from './batonMcpServer.js';

/** Options of {@link mcpRoutes}. */
export interface McpRoutesOptions extends BatonMcpOptions {
  /** The auth hook, as `createBatonApp`'s (undefined or a throw: 401). Without one every caller is anonymous. */
  authenticate?: Authenticate;
}

/** A JSON-RPC error answer (the MCP transport's form for errors outside a call). */
function rpcError(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status });
}

/**
 * The workflow as an MCP server over Streamable HTTP (the SDK's Web-standard transport), as a Hono
 * app to mount (`app.route('/mcp', mcpRoutes({ workflow }))`): `POST` (JSON-RPC), `GET` (the
 * server's event stream) and `DELETE` (end the conversation) on `/`. Each MCP session (`initialize`
 * gives it an `Mcp-Session-Id`) is one Baton session whose id is the MCP session id, created for the
 * caller's tenant and user on the first tool call (see {@link batonMcpServer} for the tools).
 * MCP sessions live in this process: after a restart a client initializes again (a new Baton session).
 *
 * Answers: 401 without credentials the auth hook accepts; 404 for an unknown MCP session or one
 * another principal opened; 400 for a request without a session id that is not `initialize`.
 *
 * @param options `{ workflow, toolName?, description?, authenticate? }`
 * @returns the Hono app
 * @example
 * ```ts
 * import { mcpRoutes } from '@baton/server/mcp';
 * app.route('/mcp', mcpRoutes({ workflow: desk, authenticate }));
 * // client: new StreamableHTTPClientTransport(new URL('http://127.0.0.1:8787/mcp'))
 * ```
 */
export function mcpRoutes(options: McpRoutesOptions): Hono {
  const sessions = new Map<string, { transport: WebStandardStreamableHTTPServerTransport; owner: string }>();
  // One set of running turns for every MCP session: each turn holds its branch's lease in the store.
  const runs = new TurnRuns(options.events, options.workflow.config.store);
  const app = new Hono();
  app.all('/', async (c) => {
    let principal: Principal | undefined;
    try {
      principal = options.authenticate === undefined ? {} : await options.authenticate(c.req.raw);
    } catch {
      principal = undefined;
    }
    if (principal === undefined) return rpcError(401, -32001, 'The request carries no credentials the server accepts.');
    const owner = JSON.stringify([principal.tenantId ?? null, principal.userId ?? null]);
    const sessionId = c.req.header('mcp-session-id');
    if (sessionId !== undefined) {
      const known = sessions.get(sessionId);
      if (known === undefined || known.owner !== owner)
        return rpcError(
          404,
          -32001,
          `MCP session ${JSON.stringify(sessionId)} does not exist (or is not yours); initialize a new one.`,
        );
      return known.transport.handleRequest(c.req.raw);
    }
    let body: unknown;
    try {
      body = c.req.method === 'POST' ? await c.req.json() : undefined;
    } catch {
      return rpcError(400, -32700, 'The request body is not JSON.');
    }
    if (!isInitializeRequest(body))
      return rpcError(
        400,
        -32000,
        'Send the Mcp-Session-Id header of your MCP session, or start one with an initialize request.',
      );
    const caller = principal;
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, owner });
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    const server = batonMcpServer(options, { sessionId: () => transport.sessionId!, principal: caller, runs });
    await server.connect(transport);
    return transport.handleRequest(c.req.raw, { parsedBody: body });
  });
  return app;
}
