/**
 * `@baton/server/mcp`: a handoff workflow as an MCP server (tools that send a message and answer the
 * workflow's requests), over Streamable HTTP (`mcpRoutes`) or stdio (`serveMcpStdio`), one Baton
 * session per MCP conversation. Needs the peer dependency `@modelcontextprotocol/sdk`.
 *
 * @example
 * ```ts
 * import { mcpRoutes } from '@baton/server/mcp';
 * app.route('/mcp', mcpRoutes({ workflow: desk, authenticate }));
 * ```
 */

export { type BatonMcpOptions, batonMcpServer, type McpConversation } from './batonMcpServer.js';
export { type McpRoutesOptions, mcpRoutes } from './mcpRoutes.js';
export { type McpStdioOptions, serveMcpStdio } from './serveMcpStdio.js';
