import { fileURLToPath } from 'node:url';
import { serveMcpStdio } from '@baton/server/mcp';
import { openDesk } from '../desk/openDesk.js';

/** The folder the MCP server keeps its sessions in by default: `examples/support-desk/.data/mcp` (gitignored). */
export const DEFAULT_MCP_STORE_DIR = fileURLToPath(new URL('../../.data/mcp', import.meta.url));

/** Options of {@link mcpCommand}. */
export interface McpCommandOptions {
  /** The conversations file the offline models learn from. */
  data?: string;
  /** `'offline'` (default) or `'openai'`. */
  models?: 'offline' | 'openai';
  /** The FileStore folder (default {@link DEFAULT_MCP_STORE_DIR}). */
  storeDir?: string;
  /** The Baton session of this MCP conversation: an existing one continues (default: a new one). */
  session?: string;
}

/**
 * `support-desk mcp`: the desk as an MCP server on this process's stdin and stdout, the transport an
 * MCP client (Claude Desktop, an IDE, the SDK's `StdioClientTransport`) uses when it spawns the
 * server. The process is one MCP conversation, one Baton session; it ends when stdin closes. Nothing
 * but the protocol goes to stdout.
 *
 * @param options `{ data?, models?, storeDir?, session? }`
 * @throws {NotFoundError} when the offline models' data is missing
 * @example
 * ```ts
 * // an MCP client's config: { "command": "pnpm", "args": ["--filter", "@baton/example-support-desk", "--silent", "mcp"] }
 * await mcpCommand({ storeDir: '.data/mcp' });
 * ```
 */
export async function mcpCommand(options: McpCommandOptions = {}): Promise<void> {
  const desk = await openDesk({
    storeDir: options.storeDir ?? DEFAULT_MCP_STORE_DIR,
    ...(options.models === undefined ? {} : { models: options.models }),
    ...(options.data === undefined ? {} : { data: options.data }),
  });
  const served = await serveMcpStdio({
    workflow: desk.workflow,
    ...(options.session === undefined ? {} : { sessionId: options.session }),
  });
  console.error(`Support desk MCP server on stdio, session ${served.sessionId}, store ${desk.storeLocation}.`);
  await new Promise<void>((resolve) => process.stdin.once('close', resolve));
  await served.close();
  await desk.close();
}
