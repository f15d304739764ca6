/** The orders MCP server over stdio (run as `node --import tsx mcpStdioServer.ts`; `MCP_LEDGER` names the refund ledger file). */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createOrdersMcpServer } from './mcpServer.js';

await createOrdersMcpServer(process.env.MCP_LEDGER).connect(new StdioServerTransport());
