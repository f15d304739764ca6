import { InMemoryStore, tool } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { formatTimeline, HandoffBuilder, sessionTimeline } from '../src/index.js';
import { collect, lastOf, scriptedAgent } from './support/helpers.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A clerk that asks the customer for the order number (request_user_input), looks the order up,
 * asks for approval to refund it, and answers: one user message and two answers, three turns.
 */
async function refundSession() {
  const lookup = tool({
    name: 'lookup_order',
    description: 'Finds an order.',
    parameters: z.object({ orderId: z.string() }),
    execute: ({ orderId }) => ({ orderId, status: 'delivered', total: 40 }),
  });
  const refund = tool({
    name: 'refund',
    description: 'Refunds an order.',
    parameters: z.object({ orderId: z.string(), amount: z.number() }),
    needsApproval: true,
    execute: ({ amount }) => `Refunded ${amount}.`,
  });
  const clerk = scriptedAgent(
    'clerk',
    (request) => {
      const last = lastOf(request);
      if (last?.role === 'user')
        return { toolCalls: [{ name: 'request_user_input', arguments: { prompt: 'Order number?' } }] };
      if (last?.toolName === 'request_user_input')
        return { toolCalls: [{ name: 'lookup_order', arguments: { orderId: last.content } }] };
      if (last?.toolName === 'lookup_order')
        return { toolCalls: [{ name: 'refund', arguments: { orderId: 'A1', amount: 40 } }] };
      return { text: `Done: ${last?.content}` };
    },
    [lookup, refund],
  );
  const store = new InMemoryStore();
  const session = await new HandoffBuilder()
    .participants(clerk)
    .store(store)
    .checkpoints({ every: 'step' })
    .build()
    .session({ id: 'refund-1' });
  await collect(session.send('I want a refund'));
  await pause(15);
  await collect(session.respond(session.pendingRequests[0]!.id, 'A1'));
  await pause(15);
  await collect(session.respond(session.pendingRequests[0]!.id, { approved: true }));
  await pause(15);
  await session.close({ reason: 'resolved' });
  return store;
}

describe('sessionTimeline and formatTimeline', () => {
  it('count a turn for the user message and for each answer, and say "1 turn" but "3 turns"', async () => {
    const store = await refundSession();
    const timeline = await sessionTimeline(store, 'refund-1');
    expect(timeline.counts.turns).toBe(3);
    const turns = timeline.entries.flatMap((e) =>
      e.kind === 'turn' || (e.kind === 'request' && e.turn !== undefined) ? [e.turn] : [],
    );
    expect(turns).toEqual([1, 2, 3]);
    const text = formatTimeline(timeline);
    expect(text.split('\n')[1]).toMatch(/^3 turns · \d+ messages · 3 tool calls \(0 failed\) · \d+ checkpoints kept$/);
    expect(text).toContain('request user_input from clerk: "Order number?" → "A1"  (turn 2)');

    const one = new InMemoryStore();
    const echo = scriptedAgent('echo', () => ({ text: 'Hi.' }));
    const session = await new HandoffBuilder().participants(echo).store(one).build().session({ id: 'one' });
    await collect(session.send('Hello'));
    expect(formatTimeline(await sessionTimeline(one, 'one')).split('\n')[1]).toBe(
      '1 turn · 2 messages · 0 tool calls (0 failed) · 1 checkpoint kept',
    );
  });

  it('prints tool arguments and JSON results as JSON, not as escaped strings', async () => {
    const text = formatTimeline(await sessionTimeline(await refundSession(), 'refund-1'), { maxText: 200 });
    expect(text).toMatch(
      /tool lookup_order \{"orderId":"A1"\} \(\d+ ms\) → \{"orderId":"A1","status":"delivered","total":40\}/,
    );
    expect(text).toContain(
      'request tool_approval from clerk: approve refund {"orderId":"A1","amount":40} → "approved"',
    );
    expect(text).not.toContain('\\"');
    // Long JSON is clipped like any text.
    expect(formatTimeline(await sessionTimeline(await refundSession(), 'refund-1'), { maxText: 10 })).toContain(
      'tool lookup_order {"orderId…',
    );
  });

  it('tells the entries in time order', async () => {
    const timeline = await sessionTimeline(await refundSession(), 'refund-1');
    const times = timeline.entries.map((e) => Date.parse(e.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(timeline.entries).toContainEqual(expect.objectContaining({ kind: 'closed', reason: 'resolved' }));
    const lines = formatTimeline(timeline).split('\n').slice(5);
    const clocks = lines.map((line) => line.slice(0, 12));
    expect(clocks).toEqual([...clocks].sort());
  });
});
