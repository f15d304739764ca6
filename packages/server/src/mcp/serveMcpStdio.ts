import { createId } from '@baton/core';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Principal } from '../http/auth.js';
import { type BatonMcpOptions, batonMcpServer } from './batonMcpServer.js';

/** Options of {@link serveMcpStdio}. */
export interface McpStdioOptions extends BatonMcpOptions {
  /** The Baton session of this process's one MCP conversation (default: a new id); give one to continue a session. */
  sessionId?: string;
  /** Whose the session is (default: anonymous). */
  principal?: Principal;
}

/**
 * Serves the workflow as an MCP server on this process's stdin and stdout (the stdio transport an
 * MCP client uses when it spawns the server). The process is one MCP conversation, so one Baton
 * session (`sessionId`, or a new one). Write logs to stderr: stdout carries the protocol.
 *
 * @param options `{ workflow, toolName?, description?, sessionId?, principal? }`
 * @returns the Baton session id and a `close()` that ends the transport
 * @example
 * ```ts
 * // desk-mcp.ts, run by the client as `node desk-mcp.js`
 * import { serveMcpStdio } from '@baton/server/mcp';
 * await serveMcpStdio({ workflow: desk });
 * ```
 */
export async function serveMcpStdio(
  options: McpStdioOptions,
): Promise<{ sessionId: string; close: () => Promise<void> }> {
  const sessionId = options.sessionId ?? createId();
  const server = batonMcpServer(options, { sessionId: () => sessionId, principal: options.principal ?? {} });
  await server.connect(new StdioServerTransport());
  return { sessionId, close: () => server.close() };
}
