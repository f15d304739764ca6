import { type BatonEvent, NotFoundError, tool } from '@baton/core';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HandoffBuilder, replaySession } from '../src/index.js';
import { collect, disposeStores, embeddedStores, lastOf, scriptedAgent } from './support/helpers.js';

afterAll(disposeStores);

/** The live events a replay rebuilds (no deltas, checkpoints, requests or errors; usage is not stored). */
function comparable(events: readonly BatonEvent[]): unknown[] {
  return events
    .filter(
      (e) => !['message.delta', 'model.started', 'model.completed', 'checkpoint', 'request', 'error'].includes(e.type),
    )
    .map((e) =>
      e.type === 'turn.completed' ? { ...e, usage: null } : e.type === 'tool.result' ? { ...e, durationMs: null } : e,
    );
}

describe.each(embeddedStores())('replaySession on %s', (_, makeStore) => {
  it('rebuilds the events of a stored conversation (handoffs, parallel tool calls, answers, close) and its routing state, calling no model or tool', async () => {
    const store = await makeStore();
    let toolRuns = 0;
    const lookUp = tool({
      name: 'look_up',
      description: 'Looks up an order.',
      parameters: z.object({ orderId: z.string() }),
      execute: async ({ orderId }) => {
        toolRuns += 1;
        return `order ${orderId} shipped`;
      },
    });
    const triage = scriptedAgent('triage', (request) =>
      lastOf(request)?.role === 'user'
        ? { toolCalls: [{ name: 'handoff_to_shipping', arguments: { reason: 'order' } }] }
        : { text: 'Anything else?' },
    );
    const shipping = scriptedAgent(
      'shipping',
      (request) =>
        lastOf(request)?.role === 'tool'
          ? { text: 'Both shipped.' }
          : {
              toolCalls: [
                { name: 'look_up', arguments: { orderId: '1' } },
                { name: 'look_up', arguments: { orderId: '2' } },
              ],
            },
      [lookUp],
    );
    const workflow = new HandoffBuilder({ name: 'desk' }).participants(triage, shipping).store(store).build();
    const session = await workflow.session({ id: 'replay-1' });
    const live = [
      ...(await collect(session.send('where are orders 1 and 2?'))),
      ...(await collect(session.send('and order 3?'))),
    ];
    await session.close({ reason: 'resolved' });
    const modelCalls = triage.model.requests.length + shipping.model.requests.length;
    const runs = toolRuns;

    const replay = await replaySession(workflow, 'replay-1');
    expect(comparable(replay.events.filter((e) => e.type !== 'session.closed'))).toEqual(comparable(live));
    expect(replay.events.at(-1)).toMatchObject({ type: 'session.closed', reason: 'resolved' });
    expect(replay.routing).toEqual({ state: 'idle', activeAgent: 'triage', turn: 2 });
    expect(replay.messages).toEqual(await store.readMessages('replay-1', 'main'));
    expect(triage.model.requests.length + shipping.model.requests.length).toBe(modelCalls);
    expect(toolRuns).toBe(runs);
  });

  it('rebuilds the events of a nested workflow (workflow.asExecutor()) as the live run emitted them: inner agents and inner handoffs', async () => {
    const store = await makeStore();
    let handedBack = false;
    const billingTriage = scriptedAgent('billing-triage', (request) => {
      handedBack = lastOf(request)?.content.includes('shipping') === true;
      return handedBack
        ? { toolCalls: [{ name: 'handoff_to_triage', arguments: { reason: 'not billing' } }] }
        : { toolCalls: [{ name: 'handoff_to_invoices', arguments: { reason: 'an invoice' } }] };
    });
    const invoices = scriptedAgent('invoices', () => ({ text: 'Your invoice is on its way.' }));
    const billing = new HandoffBuilder({ name: 'billing' })
      .participants(billingTriage, invoices)
      .coordinator(billingTriage)
      .build();
    const triage = scriptedAgent('triage', () =>
      handedBack
        ? { text: 'Shipping: it left today.' }
        : { toolCalls: [{ name: 'handoff_to_billing', arguments: { reason: 'billing' } }] },
    );
    const workflow = new HandoffBuilder({ name: 'desk' })
      .participants(triage, billing.asExecutor())
      .coordinator(triage)
      .store(store)
      .build();
    const session = await workflow.session({ id: 'replay-nested' });
    const live = [
      ...(await collect(session.send('I need my invoice'))),
      ...(await collect(session.send('and the one for May?'))),
      ...(await collect(session.send('a shipping question, too'))),
    ];

    const replay = await replaySession(workflow, 'replay-nested');
    expect(comparable(replay.events)).toEqual(comparable(live));
    expect(
      replay.events.filter((e) => e.type === 'handoff').map((e) => e.type === 'handoff' && [e.from, e.to, e.reason]),
    ).toEqual([
      ['triage', 'billing', 'billing'],
      ['billing-triage', 'invoices', 'an invoice'],
      ['triage', 'billing', 'billing'],
      ['billing-triage', 'invoices', 'an invoice'],
      ['triage', 'billing', 'billing'],
      ['billing', 'triage', 'not billing'],
    ]);
    expect(replay.routing).toEqual({ state: 'idle', activeAgent: 'triage', turn: 3 });
  });

  it('throws NotFoundError for an unknown session or branch', async () => {
    const store = await makeStore();
    const triage = scriptedAgent('triage', () => ({ text: 'Hi.' }));
    const workflow = new HandoffBuilder({ name: 'desk' }).participants(triage).store(store).build();
    await expect(replaySession(workflow, 'nope')).rejects.toThrow(NotFoundError);
    await collect((await workflow.session({ id: 'there' })).send('hi'));
    await expect(replaySession(workflow, 'there', { branch: 'nope' })).rejects.toThrow(NotFoundError);
  });
});
