import { AgentExecutor, agent, InMemoryStore, InvalidIdError, NotFoundError, tool } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { listToolCalls } from '../src/index.js';
import { appendConversation, runOnStore } from './support/conversation.js';

const lookUpOrder = tool({
  name: 'look_up_order',
  description: 'Finds an order.',
  parameters: z.object({ orderId: z.string() }),
  execute: async ({ orderId }) => {
    if (orderId === '0') throw new Error('order 0 does not exist');
    return { orderId, status: 'shipped' };
  },
});

async function sessionWithToolCalls() {
  const store = new InMemoryStore();
  await store.createSession({ id: 'chat-9', tenantId: 'acme', userId: 'u-1' });
  await appendConversation(store, 'chat-9', [{ role: 'user', content: 'Where are orders 1234 and 0?' }], {
    tenantId: 'acme',
  });
  const model = new ScriptedModel([
    {
      toolCalls: [
        { id: 'c1', name: 'look_up_order', arguments: { orderId: '1234' } },
        { id: 'c2', name: 'look_up_order', arguments: { orderId: '0' } },
        { id: 'c3', name: 'look_up_order', arguments: '{not json' },
      ],
    },
    { text: 'Order 1234 has shipped; I could not find order 0.' },
  ]);
  await runOnStore(
    new AgentExecutor(
      agent({ name: 'shipping', description: 'Shipping.', instructions: 'Help.', model, tools: [lookUpOrder] }),
    ),
    store,
    'chat-9',
    { tenantId: 'acme' },
  );
  return store;
}

describe('listToolCalls', () => {
  it('lists every tool call of a session with input, output, success, error, time and duration, from the stored messages', async () => {
    const store = await sessionWithToolCalls();
    const calls = await listToolCalls(store, 'chat-9', { tenantId: 'acme' });

    expect(calls.map((c) => [c.toolCallId, c.name, c.succeeded])).toEqual([
      ['c1', 'look_up_order', true],
      ['c2', 'look_up_order', false],
      ['c3', 'look_up_order', false],
    ]);
    expect(calls[0]).toMatchObject({
      input: { orderId: '1234' },
      output: '{"orderId":"1234","status":"shipped"}',
      agent: 'shipping',
      callSeq: 2,
    });
    expect(calls[0]?.error).toBeUndefined();
    expect(calls[1]).toMatchObject({
      input: { orderId: '0' },
      error: 'Error: look_up_order failed: order 0 does not exist',
    });
    expect(calls[2]?.input).toBe('{not json');
    expect(calls[2]?.error).toContain('not valid JSON');
    for (const call of calls) {
      expect(call.durationMs).toBeGreaterThanOrEqual(0);
      expect(Date.parse(call.calledAt)).toBeLessThanOrEqual(Date.parse(call.finishedAt));
      expect(call.resultSeq).toBeGreaterThan(call.callSeq);
    }
    // Derived, not stored twice: the store holds the calls only inside the messages.
    const messages = await store.readMessages('chat-9', 'main', { tenantId: 'acme' });
    expect(messages.filter((m) => m.role === 'tool')).toHaveLength(3);
  });

  it("includes a fork's inherited calls and lists nothing for a session without tools", async () => {
    const store = await sessionWithToolCalls();
    await store.forkBranch(
      'chat-9',
      { branchId: 'retry', parent: { branchId: 'main', atSeq: 5 } },
      { tenantId: 'acme' },
    );
    expect(
      (await listToolCalls(store, 'chat-9', { branchId: 'retry', tenantId: 'acme' })).map((c) => c.toolCallId),
    ).toEqual(['c1', 'c2', 'c3']);
    await store.createSession({ id: 'quiet' });
    expect(await listToolCalls(store, 'quiet')).toEqual([]);
  });

  it("refuses another tenant's session, a missing one and an unsafe id with named errors", async () => {
    const store = await sessionWithToolCalls();
    await expect(listToolCalls(store, 'chat-9', { tenantId: 'globex' })).rejects.toThrow(NotFoundError);
    await expect(listToolCalls(store, 'nope')).rejects.toThrow(/Session "nope" does not exist/);
    await expect(listToolCalls(store, '../etc')).rejects.toThrow(InvalidIdError);
  });
});
