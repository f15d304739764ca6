import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FileStore } from '@baton/core';
import { connectMcpHttp, connectMcpStdio } from '@baton/core/mcp';
import { afterEach, describe, expect, it } from 'vitest';
import { startMcpHttpServer } from '../../core/test/support/mcpServer.js';
import { ordersStdioServer } from '../../core/test/support/mcpStdio.js';
import { HandoffBuilder } from '../src/index.js';
import { collect, danglingToolCalls, lastOf, ofType, scriptedAgent, tempDir } from './support/helpers.js';

/**
 * One process's view of a desk whose billing specialist has MCP tools: `look_up_order` from a server
 * over Streamable HTTP, `refund` (behind approval) from a server over stdio that this process starts.
 */
async function openDesk(directory: string, httpUrl: string, ledger: string) {
  const orders = await connectMcpHttp(httpUrl);
  const payments = await connectMcpStdio(ordersStdioServer(ledger));
  const tools = [
    ...(await orders.tools({ filter: ['look_up_order'] })),
    ...(await payments.tools({ filter: ['refund'], needsApproval: true })),
  ];
  const triage = scriptedAgent('triage', (request) =>
    lastOf(request)?.role === 'user' ? { toolCalls: [{ name: 'handoff_to_billing', arguments: {} }] } : { text: '?' },
  );
  const billing = scriptedAgent(
    'billing',
    (request) => {
      const last = lastOf(request);
      if (last?.role === 'user')
        return { toolCalls: [{ id: 'look_1', name: 'look_up_order', arguments: { orderId: 'A-1' } }] };
      if (last?.role === 'tool' && last.toolCallId === 'look_1')
        return { toolCalls: [{ id: 'refund_1', name: 'refund', arguments: { orderId: 'A-1', amountCents: 1299 } }] };
      return { text: `Done: ${last?.content ?? ''}` };
    },
    tools,
  );
  const store = new FileStore({ directory });
  const workflow = new HandoffBuilder({ name: 'mcp-desk' })
    .participants(triage, billing)
    .coordinator(triage)
    .store(store)
    .build();
  return {
    workflow,
    store,
    [Symbol.asyncDispose]: async () => {
      await store.close();
      await orders.close();
      await payments.close();
    },
  };
}

describe('a specialist with MCP tools over stdio and Streamable HTTP', () => {
  let dispose: (() => Promise<void>) | undefined;
  afterEach(async () => dispose?.());

  it('pauses on the approval of an MCP tool, survives a restore (new processes, new connections), and runs it once after approval', async () => {
    const dir = await tempDir();
    dispose = dir.dispose;
    const ledger = join(dir.path, 'ledger.txt');
    await using http = await startMcpHttpServer();
    const storeDir = join(dir.path, 'store');

    let requestId: string;
    {
      await using first = await openDesk(storeDir, http.url, ledger);
      const session = await first.workflow.session({ id: 'mcp-1' });
      const events = await collect(session.send('I was charged twice for A-1'));
      expect(ofType(events, 'tool.result').filter((e) => e.toolName !== 'handoff_to_billing')).toEqual([
        expect.objectContaining({
          toolName: 'look_up_order',
          content: 'Order A-1: shipped on Monday.',
          isError: false,
        }),
      ]);
      const [request] = ofType(events, 'request');
      expect(request?.request).toMatchObject({
        type: 'tool_approval',
        agent: 'billing',
        toolName: 'refund',
        arguments: '{"orderId":"A-1","amountCents":1299}',
      });
      requestId = request!.request.id;
    }
    await expect(readFile(ledger, 'utf8')).rejects.toThrow();

    await using second = await openDesk(storeDir, http.url, ledger);
    const restored = await second.workflow.session({ id: 'mcp-1' });
    expect(restored.pendingRequests.map((r) => r.id)).toEqual([requestId]);
    const answer = await collect(
      restored.respond(requestId, { approved: true, arguments: { orderId: 'A-1', amountCents: 1000 } }),
    );

    expect(ofType(answer, 'tool.result')).toEqual([
      expect.objectContaining({ toolName: 'refund', content: 'Refunded 1000 cents on A-1.', isError: false }),
    ]);
    expect(answer.at(-1)).toMatchObject({ type: 'turn.completed' });
    expect(await readFile(ledger, 'utf8')).toBe('A-1 1000\n');
    const stored = await second.store.readMessages('mcp-1', 'main');
    expect(stored.at(-1)).toMatchObject({ agent: 'billing', content: 'Done: Refunded 1000 cents on A-1.' });
    expect(stored.find((m) => m.toolName === 'refund')?.metadata?.approvedArguments).toEqual({
      orderId: 'A-1',
      amountCents: 1000,
    });
    expect(danglingToolCalls(stored)).toEqual([]);
  });
});
