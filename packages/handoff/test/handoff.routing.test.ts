import { type Executor, InMemoryStore } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { HandoffBuilder } from '../src/index.js';
import { collect, danglingToolCalls, lastOf, ofType, scriptedAgent } from './support/helpers.js';

const lastWasError = (request: Parameters<Parameters<typeof scriptedAgent>[1]>[0]) => {
  const last = lastOf(request);
  return last?.role === 'tool' && last.content.startsWith('Error');
};

describe('routing guards (Done-when 4)', () => {
  it('answers a handoff to an unknown agent with an error result and an error event; the turn goes on', async () => {
    const triage = scriptedAgent('triage', (request) =>
      lastWasError(request)
        ? { text: 'Let me help you myself.' }
        : { toolCalls: [{ name: 'handoff_to_ghost', arguments: {} }] },
    );
    const billing = scriptedAgent('billing', () => ({ text: 'unused' }));
    const store = new InMemoryStore();
    const session = await new HandoffBuilder()
      .participants(triage, billing)
      .store(store)
      .build()
      .session({ id: 'r-1' });
    const events = await collect(session.send('Hello'));

    const results = ofType(events, 'tool.result');
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ toolName: 'handoff_to_ghost', isError: true });
    expect(results[0]!.content).toContain('no tool named "handoff_to_ghost"');
    expect(ofType(events, 'error')).toEqual([expect.objectContaining({ code: 'HANDOFF_REFUSED', fatal: false })]);
    expect(ofType(events, 'handoff')).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: 'turn.completed', nextAgent: 'triage' });
    const stored = await store.readMessages('r-1', 'main');
    expect(stored.at(-1)).toMatchObject({ agent: 'triage', content: 'Let me help you myself.' });
    expect(danglingToolCalls(stored)).toEqual([]);
  });

  it('does not offer, and refuses, a handoff along an edge that is not declared', async () => {
    const triage = scriptedAgent('triage', (request) =>
      lastOf(request)?.role === 'user'
        ? { toolCalls: [{ name: 'handoff_to_billing', arguments: {} }] }
        : { text: 'ok' },
    );
    const billing = scriptedAgent('billing', (request) =>
      lastWasError(request)
        ? { text: 'I will handle the shipping part too.' }
        : { toolCalls: [{ name: 'handoff_to_shipping', arguments: {} }] },
    );
    const shipping = scriptedAgent('shipping', () => ({ text: 'unused' }));
    const store = new InMemoryStore();
    const workflow = new HandoffBuilder()
      .participants(triage, billing, shipping)
      .handoffs(triage, [billing, shipping])
      .handoffs(billing, [triage])
      .store(store)
      .build();
    const session = await workflow.session({ id: 'r-2' });
    const events = await collect(session.send('Refund and reship'));

    expect(billing.model.requests[0]!.toolNames).toEqual(['handoff_to_triage', 'request_user_input']);
    expect(ofType(events, 'handoff').map((e) => `${e.from}->${e.to}`)).toEqual(['triage->billing']);
    expect(ofType(events, 'tool.result').find((e) => e.toolName === 'handoff_to_shipping')).toMatchObject({
      isError: true,
    });
    expect(ofType(events, 'error').map((e) => [e.code, e.fatal])).toEqual([['HANDOFF_REFUSED', false]]);
    expect(shipping.model.requests).toHaveLength(0);
    const stored = await store.readMessages('r-2', 'main');
    expect(stored.at(-1)).toMatchObject({ agent: 'billing', content: 'I will handle the shipping part too.' });
    expect(danglingToolCalls(stored)).toEqual([]);
  });

  it('stops ping-pong at maxHandoffsPerTurn with an error result the model sees', async () => {
    const triage = scriptedAgent('triage', () => ({
      toolCalls: [{ name: 'handoff_to_billing', arguments: { reason: 'yours' } }],
    }));
    const billing = scriptedAgent('billing', (request) =>
      lastWasError(request)
        ? { text: 'Fine, I will answer.' }
        : { toolCalls: [{ name: 'handoff_to_triage', arguments: { reason: 'no, yours' } }] },
    );
    const store = new InMemoryStore();
    const session = await new HandoffBuilder()
      .participants(triage, billing)
      .maxHandoffsPerTurn(3)
      .store(store)
      .build()
      .session({ id: 'r-3' });
    const events = await collect(session.send('Who handles this?'));

    expect(ofType(events, 'handoff').map((e) => `${e.from}->${e.to}`)).toEqual([
      'triage->billing',
      'billing->triage',
      'triage->billing',
    ]);
    const refused = ofType(events, 'tool.result').filter((e) => e.isError);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.content).toContain('maxHandoffsPerTurn 3');
    expect(ofType(events, 'error')).toEqual([expect.objectContaining({ code: 'HANDOFF_REFUSED', fatal: false })]);
    expect(events.at(-1)).toMatchObject({ type: 'turn.completed' });
    const stored = await store.readMessages('r-3', 'main');
    expect(stored.at(-1)).toMatchObject({ agent: 'billing', content: 'Fine, I will answer.' });
    expect(danglingToolCalls(stored)).toEqual([]);

    // The limit is per turn: the next turn may hand off again.
    const next = await collect(session.send('Again?'));
    expect(ofType(next, 'handoff').length).toBe(3);
  });

  it('refuses a handoff an Executor returns for a target it may not reach, without crashing', async () => {
    const rules: Executor = {
      name: 'rules',
      description: 'A rule-based router.',
      // biome-ignore lint/correctness/useYield: an executor may finish without events
      async *execute() {
        return {
          type: 'handoff',
          target: 'nobody',
          usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, requests: 0 },
        };
      },
    };
    const billing = scriptedAgent('billing', () => ({ text: 'unused' }));
    const session = await new HandoffBuilder().participants(rules, billing).build().session({ id: 'r-4' });
    const events = await collect(session.send('Hi'));
    expect(ofType(events, 'error')).toEqual([expect.objectContaining({ code: 'HANDOFF_REFUSED', fatal: false })]);
    expect(ofType(events, 'error')[0]!.message).toContain('"nobody"');
    expect(events.at(-1)).toMatchObject({ type: 'turn.completed', nextAgent: 'rules' });
    expect(session.routingState).toBe('idle');
  });
});
