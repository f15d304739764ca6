import { fileURLToPath } from 'node:url';
import type { StdioServerParameters } from '@modelcontextprotocol/sdk/client/stdio.js';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const script = fileURLToPath(new URL('./mcpStdioServer.ts', import.meta.url));

/** How to start the orders MCP server over stdio: `node --import tsx mcpStdioServer.ts` from the repository root (where tsx is). */
export function ordersStdioServer(ledger?: string): StdioServerParameters {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '' };
  if (ledger !== undefined) env.MCP_LEDGER = ledger;
  return { command: process.execPath, args: ['--import', 'tsx', script], cwd: repoRoot, env, stderr: 'pipe' };
}
