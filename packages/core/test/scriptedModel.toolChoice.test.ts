import { AgentExecutor, ConfigurationError, InvalidInputError } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { describe, expect, it } from 'vitest';
import { collect, lookUpOrder } from './support/modelStreams.js';
import { shippingAgent } from './support/shippingAgent.js';
import { runExecutor, TestJournal } from './support/testJournal.js';

const hi = [{ role: 'user' as const, content: 'Where is A-1?' }];
const refund = { name: 'refund', description: 'Refunds an order.', parameters: lookUpOrder.parameters };
const tools = [lookUpOrder, refund];
const lookUp = { name: 'look_up_order', arguments: { orderId: 'A-1' } };

describe('ScriptedModel takes toolChoice as a provider does', () => {
  it('refuses a scripted reply no provider gives under the choice, naming the reply, choice and fix', async () => {
    const cases = [
      {
        toolChoice: 'required' as const,
        reply: { text: 'Shipped.' },
        says: ['response #1', 'calls no tool', '"required"'],
      },
      { toolChoice: 'none' as const, reply: { toolCalls: [lookUp] }, says: ['calls look_up_order', '"none"', 'text'] },
      {
        toolChoice: { name: 'refund' },
        reply: { toolCalls: [lookUp] },
        says: ['calls look_up_order', '{"name":"refund"}', 'Script a call of "refund"'],
      },
      { toolChoice: { name: 'refund' }, reply: { text: 'Refunded.' }, says: ['calls no tool'] },
    ];
    for (const { toolChoice, reply, says } of cases) {
      const model = new ScriptedModel([reply]);
      const error = await collect(model.stream({ messages: hi, tools, settings: { toolChoice } })).catch((e) => e);
      expect(error, JSON.stringify(toolChoice)).toBeInstanceOf(ConfigurationError);
      for (const part of [...says, 'modelSettings.toolChoice']) expect(error.message).toContain(part);
    }
    // The client's option is held to the same rule, and named as the source.
    const forced = new ScriptedModel([{ text: 'Shipped.' }], { toolChoice: 'required' });
    await expect(collect(forced.stream({ messages: hi, tools }))).rejects.toThrow(/ScriptedModel's toolChoice option/);
  });

  it('answers replies that obey the choice, and records the choice a provider would have been sent', async () => {
    const model = new ScriptedModel(
      [{ toolCalls: [lookUp] }, { toolCalls: [{ name: 'refund', arguments: { orderId: 'A-1' } }] }, { text: 'No.' }],
      { toolChoice: 'required' },
    );
    await collect(model.stream({ messages: hi, tools }));
    await collect(model.stream({ messages: hi, tools, settings: { toolChoice: { name: 'refund' } } }));
    // No tools: nothing is sent (as the OpenAI clients leave tool_choice out), so text is fine.
    await collect(model.stream({ messages: hi, tools: [], settings: { toolChoice: 'none' } }));
    expect(model.requests.map((r) => r.toolChoice)).toEqual(['required', { name: 'refund' }, undefined]);
  });

  it('a choice naming a tool the request lacks is InvalidInputError before any reply is used', async () => {
    const model = new ScriptedModel([{ toolCalls: [lookUp] }]);
    await expect(
      collect(model.stream({ messages: hi, tools: [lookUpOrder], settings: { toolChoice: { name: 'refund' } } })),
    ).rejects.toBeInstanceOf(InvalidInputError);
    expect(model.remaining).toBe(1);
    expect(() => new ScriptedModel([], { toolChoice: 'always' as never })).toThrow(ConfigurationError);
  });

  it('in the agent loop: the forced first call must call a tool, the call after it (reset) may answer', async () => {
    const looked: string[] = [];
    const shipping = (model: ScriptedModel) => shippingAgent(model, looked);
    const turnSettings = { modelSettings: { toolChoice: 'required' as const } };
    const obeying = new ScriptedModel([{ toolCalls: [lookUp] }, { text: 'A-1 has shipped.' }]);
    const journal = new TestJournal();
    await journal.commit([{ role: 'user', content: 'Where is A-1?' }]);
    const { outcome } = await runExecutor(new AgentExecutor(shipping(obeying)), journal, {
      history: journal.messages,
      turnSettings,
    });
    expect(outcome).toMatchObject({ type: 'reply', message: { content: 'A-1 has shipped.' } });
    expect(obeying.requests.map((r) => r.toolChoice)).toEqual(['required', undefined]);
    expect(looked).toEqual(['A-1']);

    // A script whose first reply skips the forced tool call fails the activation, as no real model would answer so.
    const skipping = new ScriptedModel([{ text: 'A-1 has shipped.' }]);
    const other = new TestJournal();
    await other.commit([{ role: 'user', content: 'Where is A-1?' }]);
    await expect(
      runExecutor(new AgentExecutor(shipping(skipping)), other, { history: other.messages, turnSettings }),
    ).rejects.toBeInstanceOf(ConfigurationError);
  });
});
