import { NotFoundError, type Store, tool } from '@baton/core';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HandoffBuilder } from '../src/index.js';
import { collect, danglingToolCalls, disposeStores, embeddedStores, lastOf, scriptedAgent } from './support/helpers.js';

afterAll(disposeStores);

/** Billing notes the order in its branch state, then asks to refund it (approval needed), then reports. */
function desk(store: Store, refunds: string[]) {
  const note = tool({
    name: 'note',
    description: 'Notes an order.',
    parameters: z.object({ orderId: z.string() }),
    execute: async ({ orderId }, { state }) => {
      state.update('branch', (draft) => {
        draft.notes = [...((draft.notes as string[] | undefined) ?? []), orderId];
      });
      return 'noted';
    },
  });
  const refund = tool({
    name: 'refund',
    description: 'Refunds an order.',
    parameters: z.object({ orderId: z.string() }),
    needsApproval: true,
    execute: async ({ orderId }) => {
      refunds.push(orderId);
      return `refunded ${orderId}`;
    },
  });
  const billing = scriptedAgent(
    'billing',
    (request) => {
      const last = lastOf(request);
      if (last?.role === 'user') return { toolCalls: [{ name: 'note', arguments: { orderId: last.content } }] };
      if (last?.content === 'noted') return { toolCalls: [{ name: 'refund', arguments: { orderId: '42' } }] };
      return { text: `Result: ${last?.content}` };
    },
    [note, refund],
  );
  return new HandoffBuilder({ name: 'desk' }).participants(billing).store(store).build();
}

describe.each(embeddedStores())('session.rewind(checkpointId) on %s', (_, makeStore) => {
  it('goes back to a paused approval on a new branch, with the state and requests of that moment; the original branch is untouched', async () => {
    const store = await makeStore();
    const refunds: string[] = [];
    const session = await desk(store, refunds).session({ id: 'rw-1' });
    await collect(session.send('42'));
    const paused = (await session.checkpoints()).at(-1)!;
    const [request] = session.pendingRequests;
    await collect(session.respond(request!.id, { approved: true }));
    expect(session.messages.at(-1)?.content).toBe('Result: refunded 42');
    expect(refunds).toEqual(['42']);
    const original = await store.readMessages('rw-1', 'main');

    const other = await session.rewind(paused.id, { branchId: 'reject' });
    expect(other.branchId).toBe('reject');
    expect(other.routingState).toBe('awaitingRequest');
    expect(other.pendingRequests).toHaveLength(1);
    expect(other.pendingRequests[0]).toMatchObject({
      type: 'tool_approval',
      toolName: 'refund',
      conversationRef: { branchId: 'reject' },
    });
    expect(other.pendingRequests[0]!.id).not.toBe(request!.id);
    expect(other.messages.map((m) => m.seq)).toEqual(
      original.filter((m) => m.seq <= paused.throughSeq).map((m) => m.seq),
    );

    await collect(other.respond(other.pendingRequests[0]!.id, { approved: false, reason: 'not today' }));
    expect(refunds).toEqual(['42']); // not run on the new branch
    expect(other.messages.at(-1)?.content).toContain('not today');
    expect((await store.getBranch('rw-1', 'reject'))?.state).toEqual({ notes: ['42'] });
    expect(danglingToolCalls(await store.readMessages('rw-1', 'reject'))).toEqual([]);
    expect(await store.readMessages('rw-1', 'main')).toEqual(original);
  });

  it('at a turn-end checkpoint starts the next turn from the state of that moment', async () => {
    const store = await makeStore();
    const refunds: string[] = [];
    const session = await desk(store, refunds).session({ id: 'rw-2' });
    await collect(session.send('1'));
    await collect(session.respond(session.pendingRequests[0]!.id, { approved: true }));
    const afterFirst = (await session.checkpoints()).at(-1)!;
    await collect(session.send('2'));
    await collect(session.respond(session.pendingRequests[0]!.id, { approved: true }));
    expect((await store.getBranch('rw-2', 'main'))?.state).toEqual({ notes: ['1', '2'] });
    const other = await session.rewind(afterFirst.id, { branchId: 'again' });
    expect(other.routingState).toBe('idle');
    expect((await store.getBranch('rw-2', 'again'))?.state).toEqual({ notes: ['1'] });
    await collect(other.send('3'));
    await collect(other.respond(other.pendingRequests[0]!.id, { approved: true }));
    expect((await store.getBranch('rw-2', 'again'))?.state).toEqual({ notes: ['1', '3'] });
  });

  it('refuses an unknown checkpoint id and creates no branch', async () => {
    const store = await makeStore();
    const session = await desk(store, []).session({ id: 'rw-3' });
    await collect(session.send('1'));
    await expect(session.rewind('01890000-0000-7000-8000-000000000000', { branchId: 'x' })).rejects.toThrow(
      NotFoundError,
    );
    expect((await store.listBranches('rw-3')).map((b) => b.id)).toEqual(['main']);
  });
});
