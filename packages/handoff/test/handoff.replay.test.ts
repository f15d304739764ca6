/**
 * docs/architecture.md invariant 6, deterministic replay: the same model outputs give the same events and the
 * same stored documents, ids and clocks aside. The conversation runs twice on fresh stores and
 * fresh models with the same script: a handoff, a tool call, a question to the user, an approval.
 */
import { type BatonEvent, InMemoryStore, type Store, tool } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HandoffBuilder } from '../src/index.js';
import { collect, lastOf, scriptedAgent } from './support/helpers.js';

function desk(store: Store) {
  const lookUp = tool({
    name: 'look_up_order',
    description: 'Finds an order.',
    parameters: z.object({ orderId: z.string() }),
    execute: async ({ orderId }) => ({ orderId, charged: 2 }),
  });
  const refund = tool({
    name: 'refund',
    description: 'Refunds a charge.',
    parameters: z.object({ orderId: z.string() }),
    needsApproval: true,
    execute: async ({ orderId }) => `refunded ${orderId}`,
  });
  const triage = scriptedAgent('triage', (request) =>
    lastOf(request)?.role === 'user'
      ? { toolCalls: [{ name: 'handoff_to_billing', arguments: { reason: 'charges' } }] }
      : { text: 'Anything else?' },
  );
  const billing = scriptedAgent(
    'billing',
    (_request, index) =>
      [
        { toolCalls: [{ name: 'request_user_input', arguments: { prompt: 'Which order?' } }] },
        { toolCalls: [{ name: 'look_up_order', arguments: { orderId: '1234' } }] },
        { toolCalls: [{ name: 'refund', arguments: { orderId: '1234' } }] },
        { text: 'Refunded the second charge.' },
      ][index] ?? { text: 'Done.' },
    [lookUp, refund],
  );
  return new HandoffBuilder().participants(triage, billing).store(store).build();
}

/** Replaces ids (UUIDs) by their order of first appearance, timestamps and durations by constants. */
function normalise(value: unknown): unknown {
  const ids = new Map<string, string>();
  const text = JSON.stringify(value, (key, v) => (key === 'durationMs' ? 0 : v))
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<time>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => {
      if (!ids.has(id)) ids.set(id, `<id${ids.size}>`);
      return ids.get(id)!;
    });
  return JSON.parse(text);
}

async function run(): Promise<{ events: BatonEvent[]; stored: unknown }> {
  const store = new InMemoryStore();
  const session = await desk(store).session({ id: 'replay-1', userId: 'u-1' });
  const events = await collect(session.send('I was charged twice'));
  events.push(...(await collect(session.respond(session.pendingRequests[0]!.id, 'Order 1234'))));
  events.push(...(await collect(session.respond(session.pendingRequests[0]!.id, { approved: true }))));
  const checkpoints = await Promise.all(
    (await store.listCheckpoints('replay-1', 'main')).map((c) => store.loadCheckpoint('replay-1', 'main', c.id)),
  );
  const stored = {
    session: await store.getSession('replay-1'),
    branches: await store.listBranches('replay-1'),
    messages: await store.readMessages('replay-1', 'main'),
    checkpoints,
  };
  return { events, stored };
}

describe('deterministic replay (docs/architecture.md invariant 6)', () => {
  it('the same model outputs give the same events and the same stored documents, ids and clocks aside', async () => {
    const first = await run();
    const second = await run();
    expect(first.events.map((e) => e.type)).toContain('request');
    expect((first.stored as { messages: unknown[] }).messages.length).toBeGreaterThan(8);
    expect(normalise(second.events)).toEqual(normalise(first.events));
    expect(normalise(second.stored)).toEqual(normalise(first.stored));
  });
});
