import { InvalidInputError, type Store, tool } from '@baton/core';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HandoffBuilder } from '../src/index.js';
import { collect, danglingToolCalls, disposeStores, embeddedStores, lastOf, scriptedAgent } from './support/helpers.js';

afterAll(disposeStores);

function desk(store: Store, runs: string[]) {
  const lookUp = tool({
    name: 'look_up',
    description: 'Looks up an order.',
    parameters: z.object({ orderId: z.string() }),
    execute: async ({ orderId }) => {
      runs.push(`look_up ${orderId}`);
      return `order ${orderId} shipped`;
    },
  });
  const refund = tool({
    name: 'refund',
    description: 'Refunds an order.',
    parameters: z.object({ orderId: z.string() }),
    needsApproval: true,
    execute: async ({ orderId }) => {
      runs.push(`refund ${orderId}`);
      return `refunded ${orderId}`;
    },
  });
  const triage = scriptedAgent('triage', (request) =>
    lastOf(request)?.role === 'user'
      ? { toolCalls: [{ name: 'handoff_to_billing', arguments: {} }] }
      : { text: 'Anything else?' },
  );
  const billing = scriptedAgent(
    'billing',
    (request) => {
      const last = lastOf(request);
      if (last?.role === 'tool') return { text: `Billing: ${last.content}` };
      const tool = last?.content.startsWith('refund') ? 'refund' : 'look_up';
      return { toolCalls: [{ name: tool, arguments: { orderId: '42' } }] };
    },
    [lookUp, refund],
  );
  return new HandoffBuilder({ name: 'desk' }).participants(triage, billing).store(store).build();
}

describe.each(embeddedStores())('session.discard() on %s', (_, makeStore) => {
  it('gives up a turn interrupted before its tool ran: the call gets a Discarded result, the next send starts fresh at the coordinator, a reload does not resume it', async () => {
    const store = await makeStore();
    const runs: string[] = [];
    const session = await desk(store, runs).session({ id: 'd-1' });
    for await (const event of session.send('where is 42?'))
      if (event.type === 'tool.call' && event.toolCall.name === 'look_up') break;
    const reopened = await desk(store, runs).session({ id: 'd-1' });
    expect(reopened.routingState).toBe('running');
    await reopened.discard();
    expect(reopened.routingState).toBe('idle');
    expect(reopened.activeAgent).toBe('triage');
    const stored = await store.readMessages('d-1', 'main');
    expect(danglingToolCalls(stored)).toEqual([]);
    expect(stored.at(-1)).toMatchObject({ role: 'tool', toolName: 'look_up', isError: true });
    expect(stored.at(-1)?.content).toMatch(/^Discarded/);

    const fresh = await desk(store, runs).session({ id: 'd-1' });
    expect(fresh.routingState).toBe('idle'); // replayed as discarded, not resumed
    const events = await collect(fresh.send('refund 42 please'));
    expect(events.filter((e) => e.type === 'turn.completed')).toHaveLength(1); // no left turn finished first
    expect(runs).toEqual([]); // the look-up never ran; the refund waits for approval
    expect(fresh.pendingRequests[0]).toMatchObject({ type: 'tool_approval', toolName: 'refund' });
  });

  it('gives up a turn paused on an approval: the tool does not run and the request is gone', async () => {
    const store = await makeStore();
    const runs: string[] = [];
    const session = await desk(store, runs).session({ id: 'd-2' });
    await collect(session.send('refund 42'));
    expect(session.routingState).toBe('awaitingRequest');
    await session.discard();
    expect(session.pendingRequests).toEqual([]);
    expect(runs).toEqual([]);
    const reopened = await desk(store, runs).session({ id: 'd-2' });
    expect(reopened.routingState).toBe('idle');
    expect(reopened.pendingRequests).toEqual([]);
    expect(danglingToolCalls(await store.readMessages('d-2', 'main'))).toEqual([]);
  });

  it('refuses when no turn is unfinished', async () => {
    const store = await makeStore();
    const session = await desk(store, []).session({ id: 'd-3' });
    await collect(session.send('where is 42?'));
    await expect(session.discard()).rejects.toThrow(InvalidInputError);
  });
});
