import { AgentExecutor, ConfigurationError, InvalidInputError, type ModelClient, type ModelRequest } from '@baton/core';
import { OpenAIChatModel, OpenAIResponsesModel } from '@baton/core/openai';
import { describe, expect, it } from 'vitest';
import { collect, lookUpOrder } from './support/modelStreams.js';
import { reply, startOpenAIServer } from './support/openaiServer.js';
import { shippingAgent } from './support/shippingAgent.js';
import { runExecutor, TestJournal } from './support/testJournal.js';

const hi = [{ role: 'user' as const, content: 'Where is A-1?' }];
const refund = { name: 'refund', description: 'Refunds an order.', parameters: lookUpOrder.parameters };

describe('toolChoice on the wire', () => {
  it("OpenAIChatModel sends the client's toolChoice as tool_choice; a call's settings.toolChoice wins", async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.text('a'), reply.text('b'), reply.text('c'), reply.text('d'));
    const model = new OpenAIChatModel({
      model: 'gpt-test',
      baseURL: server.baseURL,
      apiKey: 'sk-test',
      toolChoice: 'required',
    });
    const tools = [lookUpOrder, refund];
    await collect(model.stream({ messages: hi, tools }));
    await collect(model.stream({ messages: hi, tools, settings: { toolChoice: { name: 'refund' } } }));
    await collect(model.stream({ messages: hi, tools, settings: { toolChoice: 'none' } }));
    // 'auto' and 'none' mean nothing without tools, and OpenAI rejects tool_choice without tools.
    await collect(model.stream({ messages: hi, tools: [], settings: { toolChoice: 'auto' } }));
    expect(server.requests.map((r) => r.body.tool_choice)).toEqual([
      'required',
      { type: 'function', function: { name: 'refund' } },
      'none',
      undefined,
    ]);
  });

  it('OpenAIResponsesModel sends tool_choice in the Responses shape ({ type: "function", name })', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.text('a'), reply.text('b'));
    const model = new OpenAIResponsesModel({
      model: 'gpt-test',
      baseURL: server.baseURL,
      apiKey: 'sk-test',
      toolChoice: { name: 'look_up_order' },
    });
    await collect(model.stream({ messages: hi, tools: [lookUpOrder] }));
    await collect(model.stream({ messages: hi, tools: [lookUpOrder], settings: { toolChoice: 'required' } }));
    expect(server.requests.map((r) => [r.path, r.body.tool_choice])).toEqual([
      ['/v1/responses', { type: 'function', name: 'look_up_order' }],
      ['/v1/responses', 'required'],
    ]);
  });

  it('a forced choice naming a tool the request does not offer is an InvalidInputError before any HTTP call', async () => {
    await using server = await startOpenAIServer();
    const chat = new OpenAIChatModel({ model: 'gpt-test', baseURL: server.baseURL, apiKey: 'sk-test' });
    const responses = new OpenAIResponsesModel({ model: 'gpt-test', baseURL: server.baseURL, apiKey: 'sk-test' });
    for (const model of [chat, responses] as ModelClient[]) {
      const unknown: ModelRequest = {
        messages: hi,
        tools: [lookUpOrder],
        settings: { toolChoice: { name: 'refnud' } },
      };
      const error = await collect(model.stream(unknown)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as Error).message).toContain('names tool "refnud", which the request does not offer');
      expect((error as Error).message).toContain('"look_up_order"');
      const none: ModelRequest = { messages: hi, tools: [], settings: { toolChoice: 'required' } };
      const noTools = await collect(model.stream(none)).catch((e: unknown) => e);
      expect(noTools).toBeInstanceOf(InvalidInputError);
      expect((noTools as Error).message).toContain('the request offers no tools');
    }
    expect(server.requests).toHaveLength(0);
  });

  it("a client's toolChoice that is malformed, or names a tool the request lacks, is a ConfigurationError", async () => {
    await using server = await startOpenAIServer();
    const options = { model: 'gpt-test', baseURL: server.baseURL, apiKey: 'sk-test' };
    expect(() => new OpenAIChatModel({ ...options, toolChoice: 'always' as 'auto' })).toThrow(ConfigurationError);
    expect(() => new OpenAIResponsesModel({ ...options, toolChoice: { tool: 'x' } as never })).toThrow(
      /toolChoice \{"tool":"x"\} is not 'auto', 'required', 'none' or \{ name: '<tool name>' \}/,
    );
    const model = new OpenAIChatModel({ ...options, toolChoice: { name: 'refund' } });
    const error = await collect(model.stream({ messages: hi, tools: [lookUpOrder] })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toContain('the client\'s toolChoice option names tool "refund"');
    expect(server.requests).toHaveLength(0);
  });
});

describe('toolChoice in the agent loop', () => {
  it('after the tool calls a forced choice made, the next call of the agent no longer forces one', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(
      reply.toolCalls([{ id: 'call_1', name: 'look_up_order', arguments: { orderId: 'A-1' } }]),
      reply.text('A-1 has shipped.'),
    );
    const model = new OpenAIChatModel({ model: 'gpt-test', baseURL: server.baseURL, apiKey: 'sk-test' });
    const looked: string[] = [];
    const journal = new TestJournal();
    await journal.commit([{ role: 'user', content: 'Where is A-1?' }]);
    const { outcome } = await runExecutor(new AgentExecutor(shippingAgent(model, looked)), journal, {
      history: journal.messages,
      turnSettings: { modelSettings: { toolChoice: 'required', temperature: 0 } },
    });

    expect(outcome).toMatchObject({ type: 'reply', message: { content: 'A-1 has shipped.' }, usage: { requests: 2 } });
    expect(looked).toEqual(['A-1']);
    expect(server.requests.map((r) => [r.body.tool_choice, r.body.temperature])).toEqual([
      ['required', 0],
      [undefined, 0],
    ]);
  });

  it("drops the client's forced default too, and keeps it dropped when the agent resumes a step of this turn", async () => {
    await using server = await startOpenAIServer();
    server.enqueue(
      reply.text('A-1 has shipped.'),
      reply.toolCalls([{ id: 'call_2', name: 'look_up_order', arguments: { orderId: 'B-2' } }]),
    );
    const model = new OpenAIChatModel({
      model: 'gpt-test',
      baseURL: server.baseURL,
      apiKey: 'sk-test',
      toolChoice: { name: 'look_up_order' },
    });
    const looked: string[] = [];
    const executor = new AgentExecutor(shippingAgent(model, looked));
    // A turn whose tool call was made (and answered) before a restart: the agent goes on unforced.
    const journal = new TestJournal();
    await journal.commit([
      { role: 'user', content: 'Where is A-1?' },
      {
        role: 'assistant',
        agent: 'shipping',
        content: '',
        toolCalls: [{ id: 'call_1', name: 'look_up_order', arguments: '{"orderId":"A-1"}' }],
      },
      { role: 'tool', content: 'A-1: shipped', toolCallId: 'call_1', toolName: 'look_up_order' },
    ]);
    const resumed = await runExecutor(executor, journal, { history: [...journal.messages] });
    expect(resumed.outcome).toMatchObject({ type: 'reply', message: { content: 'A-1 has shipped.' } });

    // The next user turn starts forced again.
    await journal.commit([{ role: 'user', content: 'And B-2?' }]);
    server.enqueue(reply.text('B-2 too.'));
    await runExecutor(executor, journal, { history: [...journal.messages] });
    expect(server.requests.map((r) => r.body.tool_choice)).toEqual([
      undefined,
      { type: 'function', function: { name: 'look_up_order' } },
      undefined,
    ]);
    expect(looked).toEqual(['B-2']);
  });
});
