import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileStore, InMemoryStore } from '@baton/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { mcpRoutes } from '../src/mcp/index.js';
import { type ServedBaton, serveBaton } from '../src/node.js';
import { TOKENS } from './support/httpClient.js';
import { stateDesk } from './support/stateDesk.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const stdioDesk = fileURLToPath(new URL('./support/mcpStdioDesk.ts', import.meta.url));

type Turn = {
  sessionId: string;
  reply: string;
  agent: string;
  pendingRequests: { id: string; type: string; toolName?: string; arguments?: string }[];
};

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** Through the SDK's client: list the tools, send a message that pauses on the refund's approval, approve it. */
async function refundConversation(client: Client, orderId: string) {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual(['desk', 'desk_respond']);
  expect(tools.find((t) => t.name === 'desk')?.inputSchema).toMatchObject({
    type: 'object',
    properties: { message: { type: 'string' } },
    required: ['message'],
  });

  const first = await client.callTool({
    name: 'desk',
    arguments: { message: `I was charged twice for order ${orderId}` },
  });
  expect(first.isError).toBeFalsy();
  const paused = first.structuredContent as Turn;
  expect(paused).toMatchObject({
    agent: 'billing',
    reply: '',
    pendingRequests: [{ type: 'tool_approval', toolName: 'refund' }],
  });
  expect(JSON.parse(paused.pendingRequests[0]!.arguments!)).toEqual({ orderId, amount: 40 });
  expect((first.content as { text: string }[])[0]!.text).toContain('billing asks to call refund');

  const refused = await client.callTool({ name: 'desk', arguments: { message: 'hello?' } });
  expect(refused.isError).toBe(true);
  expect((refused.content as { text: string }[])[0]!.text).toContain('INVALID_INPUT');

  const unknown = await client.callTool({ name: 'desk_respond', arguments: { requestId: 'nope', approved: true } });
  expect(unknown.isError).toBe(true);
  expect((unknown.content as { text: string }[])[0]!.text).toContain('NOT_FOUND');

  const second = await client.callTool({
    name: 'desk_respond',
    arguments: { requestId: paused.pendingRequests[0]!.id, approved: true },
  });
  expect(second.isError).toBeFalsy();
  const done = second.structuredContent as Turn;
  expect(done).toMatchObject({
    sessionId: paused.sessionId,
    reply: `All done. Refunded 40 EUR for order ${orderId}.`,
    pendingRequests: [],
  });
  expect((second.content as { text: string }[])[0]!.text).toBe(`All done. Refunded 40 EUR for order ${orderId}.`);
  return done.sessionId;
}

describe('the workflow as an MCP server, called by the SDK’s own client', () => {
  it('over stdio: a spawned server process, one Baton session for the conversation, continued by a new process', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'baton-mcp-'));
    cleanup.push(() => rm(directory, { recursive: true, force: true }));
    const spawnClient = async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: ['--conditions=source', '--import', 'tsx', stdioDesk, directory, 'mcp-stdio-1'],
        cwd: repoRoot,
        stderr: 'pipe',
      });
      const client = new Client({ name: 'baton-test', version: '1.0.0' });
      await client.connect(transport);
      cleanup.push(() => client.close());
      return client;
    };
    const client = await spawnClient();
    expect(await refundConversation(client, '1234')).toBe('mcp-stdio-1');
    await client.close();
    const store = new FileStore({ directory });
    const messages = await store.readMessages('mcp-stdio-1', 'main');
    expect(messages.find((m) => m.role === 'user')?.content).toBe('I was charged twice for order 1234');
    expect((await store.getBranch('mcp-stdio-1', 'main'))?.state).toMatchObject({
      refunds: [{ orderId: '1234', amount: 40 }],
    });

    // A new server process given the same session id continues the conversation from the store.
    const again = await spawnClient();
    const next = await again.callTool({ name: 'desk', arguments: { message: 'Thanks!' } });
    expect(next.structuredContent).toMatchObject({
      sessionId: 'mcp-stdio-1',
      reply: 'Anything else?',
      pendingRequests: [],
    });
    await again.close();
    const after = await new FileStore({ directory }).readMessages('mcp-stdio-1', 'main');
    expect(after.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'I was charged twice for order 1234',
      'Thanks!',
    ]);
  }, 90_000);

  it('over Streamable HTTP: each MCP session is its own Baton session, for its caller only', async () => {
    const store = new InMemoryStore();
    const { workflow, refunds } = stateDesk(store);
    const app = new Hono();
    app.route(
      '/mcp',
      mcpRoutes({ workflow, authenticate: (request) => TOKENS[request.headers.get('authorization') ?? ''] }),
    );
    const server: ServedBaton = await serveBaton(app);
    cleanup.push(() => server.close());
    const connect = async (token: string) => {
      const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: token } },
      });
      const client = new Client({ name: 'baton-test', version: '1.0.0' });
      await client.connect(transport);
      cleanup.push(() => client.close());
      return { client, transport };
    };

    const ann = await connect('Bearer acme-ann');
    const annSession = await refundConversation(ann.client, '1111');
    expect(annSession).toBe(ann.transport.sessionId);
    const other = await connect('Bearer acme-ann');
    const otherSession = await refundConversation(other.client, '2222');
    expect(otherSession).not.toBe(annSession);
    expect(refunds).toEqual(['1111:40', '2222:40']);
    const stored = await store.getSession(annSession, { tenantId: 'acme' });
    expect(stored).toMatchObject({ tenantId: 'acme', userId: 'ann' });
    expect(
      (await store.readMessages(otherSession, 'main', { tenantId: 'acme' })).find((m) => m.role === 'user')?.content,
    ).toContain('2222');

    // Another user cannot use ann's MCP session; an unknown session or a missing token is refused.
    const post = (headers: Record<string, string>) =>
      fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    expect((await post({ authorization: 'Bearer acme-bob', 'mcp-session-id': annSession })).status).toBe(404);
    expect((await post({ authorization: 'Bearer acme-ann', 'mcp-session-id': 'nope' })).status).toBe(404);
    expect((await post({})).status).toBe(401);
    expect((await post({ authorization: 'Bearer acme-ann' })).status).toBe(400);
  });
});
