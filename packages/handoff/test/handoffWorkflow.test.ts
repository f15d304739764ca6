import { InMemoryStore } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { HandoffBuilder } from '../src/index.js';
import { collect, danglingToolCalls, deskAgents, ofType } from './support/helpers.js';

describe('HandoffWorkflow', () => {
  it('runs a turn: the coordinator hands off, the specialist answers, the turn completes durably', async () => {
    const { triage, billing } = deskAgents();
    const store = new InMemoryStore();
    const workflow = new HandoffBuilder({ name: 'desk' })
      .participants(triage, billing)
      .coordinator(triage)
      .store(store)
      .build();
    const session = await workflow.session({ id: 'chat-1', userId: 'u-1' });
    const events = await collect(session.send('I was charged twice'));

    expect(events[0]).toMatchObject({ type: 'turn.started', turn: 1 });
    expect(events.at(-1)).toMatchObject({ type: 'turn.completed', turn: 1, nextAgent: 'triage' });
    expect(ofType(events, 'handoff')).toEqual([
      {
        type: 'handoff',
        sessionId: 'chat-1',
        branchId: 'main',
        from: 'triage',
        to: 'billing',
        reason: 'billing question',
      },
    ]);
    expect(ofType(events, 'agent.started').map((e) => e.agent)).toEqual(['triage', 'billing']);

    const stored = await store.readMessages('chat-1', 'main');
    expect(stored.map((m) => [m.seq, m.role, m.agent ?? null])).toEqual([
      [1, 'user', null],
      [2, 'assistant', 'triage'],
      [3, 'tool', 'triage'],
      [4, 'assistant', 'billing'],
    ]);
    expect(stored[3]!.content).toBe('Answer to: I was charged twice');
    expect(stored[2]!.metadata).toEqual({
      control: { kind: 'handoff', target: 'billing', reason: 'billing question' },
    });
    expect(danglingToolCalls(stored)).toEqual([]);

    // The specialist's input left out the handoff call and its result; the stored history keeps them.
    const billingRequest = billing.model.requests[0]!;
    expect(billingRequest.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(billingRequest.toolNames).toEqual(['handoff_to_triage', 'request_user_input']);
    expect(triage.model.requests[0]!.toolNames).toEqual(['handoff_to_billing', 'request_user_input']);

    const checkpoint = await store.loadCheckpoint('chat-1', 'main');
    expect(checkpoint).toMatchObject({ throughSeq: 4, pendingRequests: [], pendingWrites: [] });
    expect((checkpoint!.machine as { value: string }).value).toBe('idle');
  });

  it('keeps handoff calls in the receiving agent input with handoffHistory("keep")', async () => {
    const { triage, billing } = deskAgents();
    const workflow = new HandoffBuilder().participants(triage, billing).handoffHistory('keep').build();
    const session = await workflow.session({ id: 'chat-2' });
    await collect(session.send('Refund please'));
    expect(billing.model.requests[0]!.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
  });

  it('runs a stateless turn with run()', async () => {
    const { triage, billing } = deskAgents();
    const workflow = new HandoffBuilder().participants(triage, billing).build();
    const result = await workflow.run('Where is my refund?');
    expect(result.output).toBe('Answer to: Where is my refund?');
    expect(result.agent).toBe('billing');
    expect(result.messages).toHaveLength(4);
    expect(result.events.at(-1)?.type).toBe('turn.completed');
  });
});
