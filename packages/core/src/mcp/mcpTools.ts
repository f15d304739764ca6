import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { z } from 'zod';
import type { JsonSchema, Tool, ToolContext } from '../agents/tool.js';
import { ConfigurationError } from '../errors.js';
import { mcpResultText } from './mcpResult.js';

/** An MCP tool as the server lists it (`tools/list`): name, description, JSON Schema of its input. */
export interface McpToolInfo {
  name: string;
  description?: string;
  inputSchema: JsonSchema;
}

/** Options of {@link mcpTools}. */
export interface McpToolsOptions {
  /**
   * Which calls a human must approve first (a `tool_approval` request, as for any Baton tool):
   * `true` for all, a list of MCP tool names, or a predicate on the MCP tool name and the arguments.
   * Default: none.
   */
  needsApproval?:
    | boolean
    | readonly string[]
    | ((toolName: string, args: Record<string, unknown>) => boolean | Promise<boolean>);
  /** Which of the server's tools to offer: a list of MCP tool names, or a predicate. Default: all. */
  filter?: readonly string[] | ((tool: McpToolInfo) => boolean);
  /** Put before each Baton tool name (e.g. `'crm_'`), to keep tools of several servers apart. Default none. */
  prefix?: string;
}

/**
 * The tools of an MCP server as Baton tools, over a connected client of the official SDK
 * (`@modelcontextprotocol/sdk`, an optional peer of `@baton/core`). Each tool keeps the server's
 * `inputSchema` as the JSON Schema the model sees, and arguments are validated against it (with
 * the SDK's Ajv validator) before the call; invalid arguments become an error result the model
 * reads. A call is `tools/call` with the turn's abort signal; its result (`content` text, or
 * `structuredContent` as JSON) is the tool result, and an `isError` result or a protocol error
 * becomes an error result. Names outside `a-z A-Z 0-9 _ -` are changed to `_` (the MCP name is
 * kept for the call). Tools are listed once, here (every page of `tools/list`).
 * Spec: https://modelcontextprotocol.io/specification/2025-06-18/server/tools
 *
 * @param client a connected `Client` (see also {@link connectMcpStdio} and {@link connectMcpHttp})
 * @returns one Baton tool per MCP tool the filter lets through
 * @throws {ConfigurationError} when two MCP tools end up with the same Baton name; when the tools
 *   cannot be listed (the server stopped, the connection closed — the SDK's `Not connected` —, the
 *   server unreachable or answering with an error), naming the server, with the SDK's error as `cause`
 * @example
 * ```ts
 * import { Client } from '@modelcontextprotocol/sdk/client/index.js';
 * import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
 * import { mcpTools } from '@baton/core/mcp';
 * const client = new Client({ name: 'support-desk', version: '1.0.0' });
 * await client.connect(new StdioClientTransport({ command: 'node', args: ['crm-server.js'] }));
 * const tools = await mcpTools(client, { needsApproval: ['refund'] });
 * ```
 */
export async function mcpTools(client: Client, options: McpToolsOptions = {}): Promise<Tool[]> {
  const name = client.getServerVersion()?.name;
  return mcpToolsOf(client, options, name === undefined ? 'the MCP server' : `MCP server ${JSON.stringify(name)}`);
}

/**
 * {@link mcpTools}, naming the server as `where` when its tools cannot be listed (a connection
 * names it by its command or URL).
 * @throws what {@link mcpTools} throws
 */
export async function mcpToolsOf(client: Client, options: McpToolsOptions, where: string): Promise<Tool[]> {
  const listed = await listTools(client, where);

  const keep = options.filter;
  const wanted =
    keep === undefined ? listed : listed.filter((t) => (typeof keep === 'function' ? keep(t) : keep.includes(t.name)));
  const validators = new AjvJsonSchemaValidator();
  const byName = new Map<string, string>();
  return wanted.map((info) => {
    const name = batonToolName(`${options.prefix ?? ''}${info.name}`);
    const other = byName.get(name);
    if (other !== undefined) {
      throw new ConfigurationError(
        `MCP tools ${JSON.stringify(other)} and ${JSON.stringify(info.name)} both become Baton tool ${JSON.stringify(name)}; filter one out or set a prefix.`,
      );
    }
    byName.set(name, info.name);
    return mcpTool(client, info, name, validators, options.needsApproval);
  });
}

/** Every page of `tools/list`; a failure is a {@link ConfigurationError} naming `where`. */
async function listTools(client: Client, where: string): Promise<McpToolInfo[]> {
  const listed: McpToolInfo[] = [];
  let cursor: string | undefined;
  try {
    do {
      const page = await client.listTools(cursor === undefined ? undefined : { cursor });
      for (const t of page.tools) {
        const info: McpToolInfo = { name: t.name, inputSchema: t.inputSchema as JsonSchema };
        if (t.description !== undefined) info.description = t.description;
        listed.push(info);
      }
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  } catch (cause) {
    const closed =
      client.transport === undefined ? ' (the connection is closed: the server stopped, or it was closed)' : '';
    throw new ConfigurationError(
      `Cannot list the tools of ${where}: ${cause instanceof Error ? cause.message : String(cause)}${closed}; connect again.`,
      { cause },
    );
  }
  return listed;
}

/** One MCP tool as a Baton tool named `name`. */
function mcpTool(
  client: Client,
  info: McpToolInfo,
  name: string,
  validators: AjvJsonSchemaValidator,
  approval: McpToolsOptions['needsApproval'],
): Tool<Record<string, unknown>, string> {
  const validate = validators.getValidator<Record<string, unknown>>(
    info.inputSchema as Parameters<AjvJsonSchemaValidator['getValidator']>[0],
  );
  // The server's JSON Schema, enforced through zod so the agent loop reports issues like any tool's.
  const parameters = z.record(z.string(), z.unknown()).superRefine((args, ctx) => {
    const checked = validate(args);
    if (!checked.valid)
      ctx.addIssue({ code: 'custom', message: `does not match the MCP tool's input schema: ${checked.errorMessage}` });
  });
  const needsApproval =
    approval === undefined || typeof approval === 'boolean'
      ? (approval ?? false)
      : typeof approval === 'function'
        ? (args: Record<string, unknown>) => approval(info.name, args)
        : approval.includes(info.name);
  return {
    name,
    description: info.description ?? `The MCP tool ${info.name}.`,
    parameters,
    jsonSchema: info.inputSchema,
    needsApproval,
    execute: async (args: Record<string, unknown>, context: ToolContext) => {
      const result = await client.callTool({ name: info.name, arguments: args }, undefined, { signal: context.signal });
      const text = mcpResultText(result as Parameters<typeof mcpResultText>[0]);
      if (result.isError === true)
        throw new Error(text === '' ? 'the MCP server reported an error without text.' : text);
      return text;
    },
  };
}

/** An MCP tool name as a Baton tool name: characters outside `a-z A-Z 0-9 _ -` become `_`, at most 64. */
function batonToolName(name: string): string {
  const safe = name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
  return safe === '' ? '_' : safe;
}
