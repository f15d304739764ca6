/**
 * The support desk itself (its workflow, offline models, a FileStore in a temp dir) as an MCP server,
 * called by `@modelcontextprotocol/sdk`'s own client: over stdio (the desk's `mcp` command, spawned
 * as an MCP client spawns a server) and over Streamable HTTP (`/mcp` on the desk's web server). Both
 * list the desk's two tools and hold the refund conversation, the approval answered with the respond tool.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileStore } from '@baton/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_DATA_FILE } from '../src/data/dataSource.js';
import { CRYSTAL, serveDesk } from './support/servedDesk.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsx = fileURLToPath(new URL('../../../node_modules/.bin/tsx', import.meta.url));

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Turn {
  sessionId: string;
  reply: string;
  agent: string;
  pendingRequests: {
    id: string;
    type: string;
    agent: string;
    prompt?: string;
    toolName?: string;
    arguments?: string;
  }[];
}

/** Lists the desk's tools and plays the refund conversation: complaint, amount, approval. Returns the session id. */
async function refundConversation(client: Client): Promise<string> {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name)).toEqual(['support-desk', 'support-desk_respond']);
  expect(tools[0]!.description).toContain('triage: Greets the customer');
  expect(tools[0]!.inputSchema).toMatchObject({ required: ['message'] });

  const first = await client.callTool({ name: 'support-desk', arguments: { message: CRYSTAL.complaint } });
  const asked = first.structuredContent as Turn;
  expect(asked).toMatchObject({
    agent: 'account',
    pendingRequests: [{ type: 'user_input', prompt: 'How much were you charged (the amount in dollars)?' }],
  });
  // While one question waits, the next message answers it.
  const second = await client.callTool({ name: 'support-desk', arguments: { message: CRYSTAL.amount } });
  const paused = second.structuredContent as Turn;
  expect(paused).toMatchObject({
    sessionId: asked.sessionId,
    pendingRequests: [
      { type: 'tool_approval', agent: 'account', toolName: 'offer-refund', arguments: '{"amount":"40"}' },
    ],
  });
  const third = await client.callTool({
    name: 'support-desk_respond',
    arguments: { requestId: paused.pendingRequests[0]!.id, approved: true },
  });
  expect(third.isError).toBeFalsy();
  const done = third.structuredContent as Turn;
  expect(done.pendingRequests).toEqual([]);
  expect(done.reply).toContain('refunded $40');
  expect((third.content as { text: string }[])[0]!.text).toBe(done.reply);
  return done.sessionId;
}

describe('the support desk as an MCP server (the SDK client)', () => {
  it("over stdio: the desk's mcp command, spawned by the client, one Baton session in the FileStore", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'desk-mcp-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const transport = new StdioClientTransport({
      command: tsx,
      args: [
        '--conditions=source',
        'src/cli.ts',
        'mcp',
        '--store-dir',
        dir,
        '--session',
        'mcp-crystal',
        '--data',
        DEMO_DATA_FILE,
      ],
      cwd: root,
      env: { ...process.env, OPENAI_API_KEY: '', MONGODB_URL: '' } as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'desk-test', version: '1.0.0' });
    await client.connect(transport);
    cleanups.push(() => client.close());
    expect(await refundConversation(client)).toBe('mcp-crystal');
    await client.close();

    const store = new FileStore({ directory: dir });
    cleanups.push(() => store.close());
    const messages = await store.readMessages('mcp-crystal', 'main');
    expect(messages.find((m) => m.role === 'user')?.content).toBe(CRYSTAL.complaint);
    expect(messages.filter((m) => m.role === 'tool' && m.toolName === 'offer-refund')).toMatchObject([
      { isError: false },
    ]);
  }, 120_000);

  it("over Streamable HTTP: /mcp on the desk's web server, the session its caller's", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'desk-mcp-http-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const served = await serveDesk(dir);
    cleanups.push(() => served.close());
    const transport = new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), {
      requestInit: { headers: { authorization: 'Bearer crystal' } },
    });
    const client = new Client({ name: 'desk-test', version: '1.0.0' });
    await client.connect(transport);
    cleanups.push(() => client.close());
    const sessionId = await refundConversation(client);
    expect(sessionId).toBe(transport.sessionId);
    expect(await served.desk.store.getSession(sessionId, { tenantId: 'acme-web' })).toMatchObject({
      tenantId: 'acme-web',
      userId: 'crystal',
      state: { customerName: 'Crystal Minh', refunds: [{ amount: 40 }] },
    });
  }, 120_000);
});
