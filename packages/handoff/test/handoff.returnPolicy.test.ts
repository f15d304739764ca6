import { type ContextProvider, InMemoryStore, SessionClosedError } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { HandoffBuilder } from '../src/index.js';
import { collect, deskAgents, lastOf, ofType, scriptedAgent } from './support/helpers.js';

describe('return policy, autonomous mode, termination (Done-when 5)', () => {
  it("'coordinator': the next turn starts at the coordinator", async () => {
    const { triage, billing } = deskAgents();
    const session = await new HandoffBuilder()
      .participants(triage, billing)
      .returnTo('coordinator')
      .build()
      .session({ id: 'p-1' });
    const first = await collect(session.send('Charge?'));
    expect(first.at(-1)).toMatchObject({ type: 'turn.completed', nextAgent: 'triage' });
    const second = await collect(session.send('Another charge?'));
    expect(ofType(second, 'agent.started').map((e) => e.agent)).toEqual(['triage', 'billing']);
  });

  it("'previous': the next turn stays with the specialist that answered", async () => {
    const { triage, billing } = deskAgents();
    const session = await new HandoffBuilder()
      .participants(triage, billing)
      .returnTo('previous')
      .build()
      .session({ id: 'p-2' });
    const first = await collect(session.send('Charge?'));
    expect(first.at(-1)).toMatchObject({ type: 'turn.completed', nextAgent: 'billing' });
    const second = await collect(session.send('Another charge?'));
    expect(ofType(second, 'agent.started').map((e) => e.agent)).toEqual(['billing']);
    expect(triage.model.requests).toHaveLength(1);
  });

  it('per-agent overrides win over the default policy', async () => {
    const triage = scriptedAgent('triage', (request) => {
      const text = request.messages.findLast((m) => m.role === 'user')?.content ?? '';
      return lastOf(request)?.role === 'user'
        ? { toolCalls: [{ name: text.includes('ship') ? 'handoff_to_shipping' : 'handoff_to_billing', arguments: {} }] }
        : { text: '?' };
    });
    const billing = scriptedAgent('billing', () => ({ text: 'billing here' }));
    const shipping = scriptedAgent('shipping', () => ({ text: 'shipping here' }));
    const workflow = new HandoffBuilder()
      .participants(triage, billing, shipping)
      .returnTo('coordinator', { billing: 'previous' })
      .build();
    const a = await workflow.session({ id: 'p-3a' });
    expect((await collect(a.send('a charge'))).at(-1)).toMatchObject({ nextAgent: 'billing' });
    const b = await workflow.session({ id: 'p-3b' });
    expect((await collect(b.send('a ship question'))).at(-1)).toMatchObject({ nextAgent: 'triage' });
  });

  it('autonomous mode runs turns without the user and stops at its limit', async () => {
    const worker = scriptedAgent('worker', (_request, index) => ({ text: `progress ${index + 1}` }));
    const store = new InMemoryStore();
    const session = await new HandoffBuilder()
      .participants(worker)
      .autonomous({ maxTurns: 3, prompt: 'Keep going.' })
      .store(store)
      .build()
      .session({ id: 'p-4' });
    const events = await collect(session.send('Research this'));
    expect(ofType(events, 'turn.completed').map((e) => e.turn)).toEqual([1, 2, 3]);
    expect(worker.model.requests).toHaveLength(3);
    const stored = await store.readMessages('p-4', 'main');
    expect(stored.filter((m) => m.role === 'user').map((m) => [m.content, m.metadata?.autonomous ?? false])).toEqual([
      ['Research this', false],
      ['Keep going.', true],
      ['Keep going.', true],
    ]);
    expect(stored.at(-1)?.content).toBe('progress 3');
    // Control is back with the user: the next send is a new turn.
    const next = await collect(session.send('Stop now'));
    expect(ofType(next, 'turn.completed').map((e) => e.turn)).toEqual([4, 5, 6]);
  });

  it('a termination condition closes the session, once, and later sends are refused', async () => {
    const { triage, billing } = deskAgents();
    const closes: string[] = [];
    const memory: ContextProvider = {
      name: 'spy',
      onSessionClose: async ({ reason, messages, agents }) => {
        closes.push(`${reason}:${messages.length}:${agents.join('+')}`);
      },
    };
    const store = new InMemoryStore();
    const session = await new HandoffBuilder()
      .participants(triage, billing)
      .terminateWhen(({ message, turn }) => (turn >= 2 ? `resolved by ${message.agent}` : false))
      .memory(memory)
      .store(store)
      .build()
      .session({ id: 'p-5' });
    const first = await collect(session.send('One'));
    expect(ofType(first, 'session.closed')).toEqual([]);
    const second = await collect(session.send('Two'));
    expect(ofType(second, 'session.closed')).toEqual([expect.objectContaining({ reason: 'resolved by billing' })]);
    expect(second.at(-1)?.type).toBe('turn.completed');
    expect(await store.getSession('p-5')).toMatchObject({ status: 'closed', closedReason: 'resolved by billing' });
    expect(closes).toEqual(['resolved by billing:8:triage+billing']);
    await expect(collect(session.send('Three'))).rejects.toThrow(SessionClosedError);
    await session.close({ reason: 'again' });
    expect(closes).toHaveLength(1);
    expect(session.routingState).toBe('closed');
  });
});
