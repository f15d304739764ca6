/**
 * A small MCP server for the tests, made with the official SDK: an orders service with
 * `look_up_order`, `refund` (appends to a ledger file when `MCP_LEDGER` or `ledger` names one),
 * `always_fails` (an `isError` result) and `order_summary` (structured content). Served over
 * stdio by `mcpStdioServer.ts` (a child process) or over Streamable HTTP on 127.0.0.1 by
 * {@link startMcpHttpServer}.
 */
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** Builds the orders MCP server; refunds are appended as `<orderId> <amountCents>` lines to `ledger` when given. */
export function createOrdersMcpServer(ledger?: string): McpServer {
  const server = new McpServer({ name: 'orders', version: '1.0.0' });
  server.registerTool(
    'look_up_order',
    { description: 'Finds an order by its id.', inputSchema: { orderId: z.string().regex(/^[A-Z]-\d+$/) } },
    async ({ orderId }) => ({ content: [{ type: 'text', text: `Order ${orderId}: shipped on Monday.` }] }),
  );
  server.registerTool(
    'refund',
    {
      description: 'Refunds an amount in cents on an order.',
      inputSchema: { orderId: z.string(), amountCents: z.number().int().positive() },
    },
    async ({ orderId, amountCents }) => {
      if (ledger !== undefined) appendFileSync(ledger, `${orderId} ${amountCents}\n`);
      return { content: [{ type: 'text', text: `Refunded ${amountCents} cents on ${orderId}.` }] };
    },
  );
  server.registerTool('always_fails', { description: 'Fails.', inputSchema: {} }, async () => ({
    isError: true,
    content: [{ type: 'text', text: 'the warehouse system is down' }],
  }));
  server.registerTool(
    'order_summary',
    {
      description: 'Summarises an order.',
      inputSchema: { orderId: z.string() },
      outputSchema: { orderId: z.string(), items: z.number() },
    },
    async ({ orderId }) => ({
      content: [{ type: 'text', text: 'see structured content' }],
      structuredContent: { orderId, items: 3 },
    }),
  );
  return server;
}

/** A running Streamable HTTP MCP server; dispose it with `await using`. */
export interface McpHttpServer extends AsyncDisposable {
  /** e.g. `http://127.0.0.1:41234/mcp`. */
  url: string;
  /** How many JSON-RPC POSTs it served. */
  posts: number;
  close(): Promise<void>;
}

/**
 * Serves the orders MCP server over Streamable HTTP on 127.0.0.1, stateless (a server and
 * transport per request, as the SDK's stateless example does), so any number of clients connect.
 */
export async function startMcpHttpServer(ledger?: string): Promise<McpHttpServer> {
  const state = { posts: 0 };
  const http = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/mcp') {
      res.writeHead(405).end();
      return;
    }
    state.posts += 1;
    let raw = '';
    req.on('data', (chunk) => {
      raw += chunk;
    });
    req.on('end', async () => {
      const server = createOrdersMcpServer(ledger);
      const transport = new StreamableHTTPServerTransport({}); // no sessionIdGenerator: stateless
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, JSON.parse(raw));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const close = () => new Promise<void>((resolve) => http.close(() => resolve()));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    get posts() {
      return state.posts;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
