import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, type StdioServerParameters } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Tool } from '../agents/tool.js';
import { ConfigurationError } from '../errors.js';
import { type McpToolsOptions, mcpTools, mcpToolsOf } from './mcpTools.js';

/** A connected MCP client that closes with `await using` (or `close()`). */
export interface McpConnection extends AsyncDisposable {
  /** The SDK client, for anything beyond tools (resources, prompts). */
  readonly client: Client;
  /**
   * The server's tools as Baton tools (see {@link mcpTools}).
   * @throws {ConfigurationError} naming the server (its command or URL) when they cannot be listed:
   *   the server process died, the HTTP server is gone, or the connection was closed
   */
  tools(options?: McpToolsOptions): Promise<Tool[]>;
  /** Closes the connection (stops a stdio server process). Closing twice is a no-op. */
  close(): Promise<void>;
}

/** Options of {@link connectMcpStdio} and {@link connectMcpHttp}. */
export interface McpConnectOptions {
  /** How this client introduces itself (`clientInfo`). Default `{ name: 'baton', version: '0.1.0' }`. */
  clientInfo?: { name: string; version: string };
  /** Extra HTTP headers (Streamable HTTP only), e.g. `{ authorization: 'Bearer …' }`. */
  headers?: Record<string, string>;
}

/**
 * Starts an MCP server as a child process and connects to it over stdio (the SDK's
 * `StdioClientTransport`). The process is stopped when the connection closes.
 *
 * @param server `{ command, args?, env?, cwd? }`
 * @throws {ConfigurationError} when the process cannot be started or does not answer `initialize`
 * @example
 * ```ts
 * import { connectMcpStdio } from '@baton/core/mcp';
 * await using crm = await connectMcpStdio({ command: 'node', args: ['crm-server.js'] });
 * const tools = await crm.tools({ needsApproval: ['refund'] });
 * ```
 */
export function connectMcpStdio(
  server: StdioServerParameters,
  options: McpConnectOptions = {},
): Promise<McpConnection> {
  return connect(
    new StdioClientTransport(server),
    `MCP server ${JSON.stringify([server.command, ...(server.args ?? [])].join(' '))} (stdio)`,
    options,
  );
}

/**
 * Connects to an MCP server over Streamable HTTP (the SDK's `StreamableHTTPClientTransport`).
 *
 * @param url the server's MCP endpoint, e.g. `http://127.0.0.1:3001/mcp`
 * @throws {ConfigurationError} when the server cannot be reached or does not answer `initialize`
 * @example
 * ```ts
 * import { connectMcpHttp } from '@baton/core/mcp';
 * await using orders = await connectMcpHttp('http://127.0.0.1:3001/mcp');
 * const tools = await orders.tools({ filter: ['look_up_order'] });
 * ```
 */
export function connectMcpHttp(url: string | URL, options: McpConnectOptions = {}): Promise<McpConnection> {
  const transport = new StreamableHTTPClientTransport(
    new URL(url),
    options.headers === undefined ? undefined : { requestInit: { headers: options.headers } },
  );
  return connect(transport, `MCP server ${String(url)} (Streamable HTTP)`, options);
}

async function connect(transport: Transport, where: string, options: McpConnectOptions): Promise<McpConnection> {
  const client = new Client(options.clientInfo ?? { name: 'baton', version: '0.1.0' });
  try {
    await client.connect(transport);
  } catch (cause) {
    await transport.close().catch(() => undefined);
    throw new ConfigurationError(`Cannot connect to ${where}: ${(cause as Error).message}`, { cause });
  }
  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= client.close();
    return closed;
  };
  return {
    client,
    tools: (toolOptions) => mcpToolsOf(client, toolOptions ?? {}, where),
    close,
    [Symbol.asyncDispose]: close,
  };
}
