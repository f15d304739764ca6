/**
 * MCP tools for Baton (`@baton/core/mcp`): a Model Context Protocol server's tools as Baton tools,
 * over the official SDK `@modelcontextprotocol/sdk` (an optional peer: install it to use this
 * entry point; nothing else in Baton imports it).
 *
 * @example
 * ```ts
 * import { connectMcpStdio } from '@baton/core/mcp';
 * await using crm = await connectMcpStdio({ command: 'node', args: ['crm-server.js'] });
 * const specialist = agent({ name: 'billing', description: 'Refunds.', instructions: '…', model, tools: await crm.tools({ needsApproval: ['refund'] }) });
 * ```
 */
export { connectMcpHttp, connectMcpStdio, type McpConnection, type McpConnectOptions } from './mcpConnection.js';
export { type CallToolResultLike, mcpResultText } from './mcpResult.js';
export { type McpToolInfo, type McpToolsOptions, mcpTools } from './mcpTools.js';
