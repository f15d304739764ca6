import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  AgentExecutor,
  agent,
  type BatonEvent,
  ConfigurationError,
  runToolCall,
  StateContainer,
  type Tool,
} from '@baton/core';
import { connectMcpHttp, connectMcpStdio, type McpConnection } from '@baton/core/mcp';
import { ScriptedModel } from '@baton/core/testing';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { startMcpHttpServer } from './support/mcpServer.js';
import { ordersStdioServer } from './support/mcpStdio.js';
import { useTempDirs } from './support/tempDirs.js';
import { runExecutor, TestJournal } from './support/testJournal.js';

const tempDir = useTempDirs('mcp');
const callInput = {
  sessionId: 's-1',
  branchId: 'main',
  agent: 'orders',
  signal: new AbortController().signal,
  state: new StateContainer({ session: {}, branch: {} }),
};

async function call(tools: Tool[], name: string, args: unknown) {
  const outcome = await runToolCall(
    { id: 'call_1', name, arguments: JSON.stringify(args) },
    new Map(tools.map((t) => [t.name, t])),
    callInput,
  );
  if (outcome.type !== 'write') throw new Error(`expected a result, got a ${outcome.request.type} request`);
  return outcome.write;
}

const transports: Array<
  [string, (ledger: string) => Promise<{ connection: McpConnection; dispose(): Promise<void> }>]
> = [
  [
    'stdio',
    async (ledger) => {
      const connection = await connectMcpStdio(ordersStdioServer(ledger));
      return { connection, dispose: () => connection.close() };
    },
  ],
  [
    'Streamable HTTP',
    async (ledger) => {
      const server = await startMcpHttpServer(ledger);
      const connection = await connectMcpHttp(server.url);
      return {
        connection,
        dispose: async () => {
          await connection.close();
          await server.close();
        },
      };
    },
  ],
];

describe.each(transports)('mcpTools over %s', (_name, open) => {
  it("lists the server's tools with its input schemas, runs a call, and maps results and errors to tool results", async () => {
    const ledger = join(await tempDir(), 'ledger.txt');
    const { connection, dispose } = await open(ledger);
    try {
      const tools = await connection.tools();
      expect(tools.map((t) => t.name).sort()).toEqual(['always_fails', 'look_up_order', 'order_summary', 'refund']);
      const lookUp = tools.find((t) => t.name === 'look_up_order')!;
      expect(lookUp.description).toBe('Finds an order by its id.');
      expect(lookUp.jsonSchema).toMatchObject({
        type: 'object',
        properties: { orderId: { type: 'string', pattern: '^[A-Z]-\\d+$' } },
        required: ['orderId'],
      });

      expect(await call(tools, 'look_up_order', { orderId: 'A-1' })).toMatchObject({
        content: 'Order A-1: shipped on Monday.',
        isError: false,
      });
      expect(await call(tools, 'refund', { orderId: 'A-1', amountCents: 500 })).toMatchObject({
        content: 'Refunded 500 cents on A-1.',
        isError: false,
      });
      expect(await call(tools, 'order_summary', { orderId: 'A-1' })).toMatchObject({
        content: '{"orderId":"A-1","items":3}',
        isError: false,
      });
      const failed = await call(tools, 'always_fails', {});
      expect(failed).toMatchObject({ isError: true });
      expect(failed.content).toMatch(/always_fails failed: the warehouse system is down/);

      // Arguments are validated against the server's JSON Schema before anything is sent.
      const invalid = await call(tools, 'refund', { orderId: 'A-1', amountCents: -5 });
      expect(invalid.isError).toBe(true);
      expect(invalid.content).toMatch(/invalid arguments for refund: .*input schema.*amountCents/);
      expect(await readFile(ledger, 'utf8')).toBe('A-1 500\n');
    } finally {
      await dispose();
    }
  });

  it('filters tools, prefixes their names, and puts the chosen ones behind approval', async () => {
    const { connection, dispose } = await open(join(await tempDir(), 'ledger.txt'));
    try {
      const tools = await connection.tools({
        filter: ['refund', 'look_up_order'],
        prefix: 'orders_',
        needsApproval: ['refund'],
      });
      expect(tools.map((t) => [t.name, t.needsApproval])).toEqual([
        ['orders_look_up_order', false],
        ['orders_refund', true],
      ]);
      const outcome = await runToolCall(
        { id: 'call_9', name: 'orders_refund', arguments: '{"orderId":"A-1","amountCents":5}' },
        new Map(tools.map((t) => [t.name, t])),
        callInput,
      );
      expect(outcome).toMatchObject({ type: 'request', request: { type: 'tool_approval', toolName: 'orders_refund' } });
    } finally {
      await dispose();
    }
  });

  it('an agent uses the MCP tools through its loop', async () => {
    const { connection, dispose } = await open(join(await tempDir(), 'ledger.txt'));
    try {
      const model = new ScriptedModel([
        { toolCalls: [{ name: 'look_up_order', arguments: { orderId: 'B-7' } }] },
        { text: 'It shipped on Monday.' },
      ]);
      const orders = agent({
        name: 'orders',
        description: 'Orders.',
        instructions: 'Look orders up.',
        model,
        tools: await connection.tools(),
      });
      const journal = new TestJournal();
      await journal.commit([{ role: 'user', content: 'Where is B-7?' }]);
      const { outcome, events } = await runExecutor(new AgentExecutor(orders), journal);
      expect(outcome).toMatchObject({ type: 'reply', message: { content: 'It shipped on Monday.' } });
      expect(events.find((e: BatonEvent) => e.type === 'tool.result')).toMatchObject({
        toolName: 'look_up_order',
        content: 'Order B-7: shipped on Monday.',
      });
      expect(model.requests[0]?.toolNames.sort()).toEqual(['always_fails', 'look_up_order', 'order_summary', 'refund']);
    } finally {
      await dispose();
    }
  });
});

describe('MCP connections', () => {
  it('close with await using: a call after the scope fails, and closing twice is fine', async () => {
    let escaped: McpConnection | undefined;
    {
      await using connection = await connectMcpStdio(ordersStdioServer());
      escaped = connection;
      expect((await connection.tools()).length).toBe(4);
    }
    await expect(escaped.client.listTools()).rejects.toThrow();
    await escaped.close();
  });

  it('tools() of a connection whose stdio server was killed is a ConfigurationError naming the server, not the SDK\'s "Not connected"', async () => {
    await using connection = await connectMcpStdio(ordersStdioServer());
    expect((await connection.tools()).length).toBe(4);
    const pid = (connection.client.transport as StdioClientTransport).pid;
    expect(pid).toBeTypeOf('number');
    process.kill(pid!, 'SIGKILL');
    // The SDK notices the process exit and drops the transport.
    while (connection.client.transport !== undefined) await new Promise((resolve) => setTimeout(resolve, 10));
    const error = await connection.tools().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).message).toMatch(
      /MCP server .*mcpStdioServer\.ts.*\(stdio\).*Not connected.*connect again/,
    );
  });

  it('tools() of a connection whose HTTP server closed is a ConfigurationError naming the server', async () => {
    const server = await startMcpHttpServer();
    await using connection = await connectMcpHttp(server.url);
    expect((await connection.tools()).length).toBe(4);
    await server.close();
    const error = await connection.tools().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).message).toContain(`MCP server ${server.url} (Streamable HTTP)`);
  });

  it('a server that cannot be reached is a ConfigurationError naming it', async () => {
    await expect(connectMcpHttp('http://127.0.0.1:9/mcp')).rejects.toThrow(ConfigurationError);
    await expect(connectMcpStdio({ command: '/nonexistent/mcp-server' })).rejects.toThrow(/mcp-server/);
  });
});
