/**
 * model.started / model.completed (issue 13): one pair per model call, with the agent, the model's
 * name, the call's own usage, wall time and finish reason, so cost per agent shows without tracing.
 */
import { addUsage, agent, emptyUsage } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { describe, expect, it } from 'vitest';
import { HandoffBuilder } from '../src/index.js';
import { collect, lastOf, ofType } from './support/helpers.js';

function desk(billingModel: ScriptedModel) {
  const triage = agent({
    name: 'triage',
    description: 'Routes.',
    instructions: 'Route.',
    model: new ScriptedModel(
      (request) =>
        lastOf(request)?.role === 'user'
          ? { toolCalls: [{ name: 'handoff_to_billing', arguments: {} }], usage: { inputTokens: 50, outputTokens: 7 } }
          : { text: '?' },
      {
        model: 'router-1',
      },
    ),
  });
  const billing = agent({ name: 'billing', description: 'Billing.', instructions: 'Help.', model: billingModel });
  return new HandoffBuilder({ name: 'desk' }).participants(triage, billing).build();
}

describe('model call events', () => {
  it('announce each call and report its own usage, duration and finish reason; they add up to the turn', async () => {
    const session = await desk(
      new ScriptedModel([{ text: 'Refunded.', usage: { inputTokens: 120, outputTokens: 20 } }], { model: 'gpt-test' }),
    ).session({ id: 'm-1' });
    const events = await collect(session.send('I was charged twice'));
    const types = events.map((e) => e.type).filter((t) => t.startsWith('model.') || t === 'agent.started');
    expect(types).toEqual([
      'agent.started',
      'model.started',
      'model.completed',
      'agent.started',
      'model.started',
      'model.completed',
    ]);
    expect(ofType(events, 'model.started')).toEqual([
      { type: 'model.started', sessionId: 'm-1', branchId: 'main', agent: 'triage', model: 'router-1' },
      { type: 'model.started', sessionId: 'm-1', branchId: 'main', agent: 'billing', model: 'gpt-test' },
    ]);
    const completed = ofType(events, 'model.completed');
    expect(completed).toEqual([
      expect.objectContaining({
        agent: 'triage',
        model: 'router-1',
        usage: { inputTokens: 50, outputTokens: 7, totalTokens: 57, requests: 1 },
        finishReason: 'tool_calls',
      }),
      expect.objectContaining({
        agent: 'billing',
        model: 'gpt-test',
        usage: { inputTokens: 120, outputTokens: 20, totalTokens: 140, requests: 1 },
        finishReason: 'stop',
      }),
    ]);
    for (const event of completed) expect(event.durationMs).toBeGreaterThanOrEqual(0);
    const [turn] = ofType(events, 'turn.completed');
    expect(turn!.usage).toEqual(completed.reduce((sum, e) => addUsage(sum, e.usage), emptyUsage()));
  });

  it('a failed call is announced but never completed', async () => {
    const session = await desk(new ScriptedModel([{ error: new Error('rate limited') }])).session({ id: 'm-2' });
    const events: { type: string; agent?: string }[] = [];
    await expect(
      (async () => {
        for await (const event of session.send('I was charged twice')) events.push(event);
      })(),
    ).rejects.toThrow('rate limited');
    expect(events.filter((e) => e.type.startsWith('model.')).map((e) => `${e.type} ${e.agent}`)).toEqual([
      'model.started triage',
      'model.completed triage',
      'model.started billing',
    ]);
  });
});
