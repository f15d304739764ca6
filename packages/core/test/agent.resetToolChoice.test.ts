import { AgentExecutor, ConfigurationError, MaxStepsExceededError } from '@baton/core';
import { OpenAIChatModel } from '@baton/core/openai';
import { ScriptedModel } from '@baton/core/testing';
import { describe, expect, it } from 'vitest';
import { reply, startOpenAIServer } from './support/openaiServer.js';
import { shippingAgent } from './support/shippingAgent.js';
import { runExecutor, TestJournal } from './support/testJournal.js';

async function userTurn(text: string): Promise<TestJournal> {
  const journal = new TestJournal();
  await journal.commit([{ role: 'user', content: text }]);
  return journal;
}

describe('agent({ resetToolChoice: false }): a forced tool choice stays forced after the tool calls', () => {
  it('sends the forced tool_choice on every call of the turn (the default drops it after the first)', async () => {
    await using server = await startOpenAIServer();
    const call = (id: string, orderId: string) =>
      reply.toolCalls([{ id, name: 'look_up_order', arguments: { orderId } }]);
    server.enqueue(call('call_1', 'A-1'), call('call_2', 'B-2'), reply.text('Both shipped.'));
    const model = new OpenAIChatModel({ model: 'gpt-test', baseURL: server.baseURL, apiKey: 'sk-test' });
    const looked: string[] = [];
    const journal = await userTurn('Where are A-1 and B-2?');
    const { outcome } = await runExecutor(
      new AgentExecutor(shippingAgent(model, looked, { resetToolChoice: false })),
      journal,
      {
        history: journal.messages,
        turnSettings: { modelSettings: { toolChoice: 'required' } },
      },
    );
    expect(outcome).toMatchObject({ type: 'reply', message: { content: 'Both shipped.' } });
    expect(looked).toEqual(['A-1', 'B-2']);
    expect(server.requests.map((r) => r.body.tool_choice)).toEqual(['required', 'required', 'required']);

    // The default (and `true`) reset it: the second call is not forced.
    for (const [n, options] of [{}, { resetToolChoice: true }].entries()) {
      const before = server.requests.length;
      server.enqueue(call(`call_${n + 3}`, `C-${n}`), reply.text(`C-${n} shipped.`));
      const next = await userTurn(`And C-${n}?`);
      await runExecutor(new AgentExecutor(shippingAgent(model, looked, options)), next, {
        history: next.messages,
        turnSettings: { modelSettings: { toolChoice: 'required' } },
      });
      expect(server.requests.slice(before).map((r) => r.body.tool_choice)).toEqual(['required', undefined]);
    }
  });

  it("keeps the client's forced default too: a model that must keep calling the tool runs into maxSteps", async () => {
    const script = new ScriptedModel(
      [1, 2, 3].map((n) => ({ toolCalls: [{ name: 'look_up_order', arguments: { orderId: `A-${n}` } }] })),
      { toolChoice: { name: 'look_up_order' } },
    );
    const looked: string[] = [];
    const journal = await userTurn('Where is A-1?');
    const executor = new AgentExecutor(shippingAgent(script, looked, { resetToolChoice: false, maxSteps: 3 }));
    await expect(runExecutor(executor, journal, { history: journal.messages })).rejects.toBeInstanceOf(
      MaxStepsExceededError,
    );
    expect(script.requests.map((r) => r.toolChoice)).toEqual(Array(3).fill({ name: 'look_up_order' }));
    expect(looked).toEqual(['A-1', 'A-2', 'A-3']);
  });

  it('refuses a resetToolChoice that is not a boolean, naming it', () => {
    expect(() => shippingAgent(new ScriptedModel([]), [], { resetToolChoice: 'no' as never })).toThrow(
      ConfigurationError,
    );
    expect(() => shippingAgent(new ScriptedModel([]), [], { resetToolChoice: 'no' as never })).toThrow(
      /resetToolChoice "no"/,
    );
  });
});
