/**
 * The cost report of the support desk (issue 13): tokens per conversation and per agent, from the
 * models' own usage or, for the offline models that report none, counted with @baton/memory's
 * TokenCounter; printed with the routing report.
 */
import { collectModelResponse } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { chooseDeskStore } from '@baton/example-support-desk/desk/deskStore.js';
import { TokenCounter } from '@baton/memory';
import { loadConversations } from '@baton/support-desk-models';
import { describe, expect, it } from 'vitest';
import { CountedModel } from '../src/costReport.js';
import { sessionIdFor } from '../src/replayConversation.js';
import { formatReplayReport } from '../src/replayReport.js';
import { runReplay } from '../src/runReplay.js';

const messages = [
  { role: 'system' as const, content: 'You route customers.' },
  { role: 'user' as const, content: 'I was charged twice for order 1234' },
];

describe('CountedModel', () => {
  it('counts a call the model reports no usage for: its input messages and its text and tool calls', async () => {
    const model = new CountedModel(
      new ScriptedModel([
        { text: 'Let me check.', toolCalls: [{ id: 'c1', name: 'look_up_order', arguments: { orderId: '1234' } }] },
      ]),
    );
    const response = await collectModelResponse(model.stream({ messages, tools: [] }));
    const counter = new TokenCounter({ model: 'scripted' });
    const output =
      counter.countText('Let me check.') + counter.countText('look_up_order') + counter.countText('{"orderId":"1234"}');
    expect(response.usage).toEqual({
      inputTokens: counter.countMessages(messages),
      outputTokens: output,
      totalTokens: counter.countMessages(messages) + output,
      requests: 1,
    });
    expect(response.finishReason).toBe('tool_calls');
  });

  it("keeps a model's own usage", async () => {
    const model = new CountedModel(new ScriptedModel([{ text: 'Hi', usage: { inputTokens: 900, outputTokens: 2 } }]));
    const response = await collectModelResponse(model.stream({ messages, tools: [] }));
    expect(response.usage).toEqual({ inputTokens: 900, outputTokens: 2, totalTokens: 902, requests: 1 });
  });
});

describe('the replay report', () => {
  it('adds tokens per conversation and per agent, and prints them with the routing report', async () => {
    const all = await loadConversations(DEMO_DATA_FILE);
    const conversations = [all[0]!, all.find((c) => c.flow === 'order_issue')!];
    const report = await runReplay({
      conversations,
      training: all,
      ontology: loadOntology(),
      deskStore: chooseDeskStore({ directory: ':memory:' }),
    });
    const cost = report.cost!;
    expect(Object.keys(cost.perConversation)).toEqual(conversations.map((c) => sessionIdFor(c.id)));
    expect(Object.keys(cost.perAgent)).toEqual(expect.arrayContaining(['triage', 'account', 'orders']));
    const sum = (usages: { totalTokens: number; requests: number }[]) => ({
      totalTokens: usages.reduce((n, u) => n + u.totalTokens, 0),
      requests: usages.reduce((n, u) => n + u.requests, 0),
    });
    expect(sum(Object.values(cost.perConversation))).toEqual({
      totalTokens: cost.total.totalTokens,
      requests: cost.total.requests,
    });
    expect(sum(Object.values(cost.perAgent))).toEqual({
      totalTokens: cost.total.totalTokens,
      requests: cost.total.requests,
    });
    expect(cost.total.inputTokens).toBeGreaterThan(cost.total.outputTokens);
    expect(cost.total.outputTokens).toBeGreaterThan(0);

    const text = formatReplayReport(report);
    expect(text.indexOf('Tokens: ')).toBeGreaterThan(text.indexOf('Routing accuracy'));
    expect(text).toMatch(
      /^Tokens: [\d,]+ \([\d,]+ in, [\d,]+ out\) over \d+ model calls; [\d,]+ per conversation \(largest: demo-\d+, [\d,]+\)$/m,
    );
    expect(text).toMatch(/^triage\s+\d+\s+[\d,]+\s+[\d,]+\s+[\d.]+%$/m);
  });
});
