import { ConfigurationError, type ModelMessage } from '@baton/core';
import { createOpenAIModel, OpenAIChatModel, OpenAIResponsesModel, RECALLED_CONTEXT_PREFIX } from '@baton/core/openai';
import { describe, expect, it } from 'vitest';
import { collect, lookUpOrder } from './support/modelStreams.js';
import { reply, startOpenAIServer } from './support/openaiServer.js';

const conversation: ModelMessage[] = [
  { role: 'system', content: 'You are the billing agent.' },
  { role: 'context', content: 'Last week the user asked about order A-1.' },
  { role: 'user', content: 'Was I charged twice?' },
  {
    role: 'assistant',
    content: 'Let me check.',
    agent: 'billing',
    toolCalls: [{ id: 'call_1', name: 'look_up_order', arguments: '{"orderId":"A-1"}' }],
  },
  { role: 'tool', content: '{"charges":2}', toolCallId: 'call_1', toolName: 'look_up_order' },
  { role: 'system', content: 'The user is verified.' },
  { role: 'assistant', content: 'Yes, twice. Shall I refund one?', agent: 'billing' },
  { role: 'user', content: 'Yes please.' },
];

describe('OpenAIResponsesModel request mapping', () => {
  it('per-call settings win over the client options: temperature, top_p, max_output_tokens', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.text('a'));
    const model = new OpenAIResponsesModel({
      model: 'gpt-test',
      baseURL: server.baseURL,
      apiKey: 'sk-test',
      temperature: 0.9,
      maxOutputTokens: 300,
    });
    await collect(
      model.stream({
        messages: [{ role: 'user', content: 'Hi' }],
        tools: [],
        settings: { temperature: 0, topP: 0.5, maxOutputTokens: 40 },
      }),
    );
    const body = server.requests[0]?.body;
    expect([body.temperature, body.top_p, body.max_output_tokens]).toEqual([0, 0.5, 40]);
  });

  it('sends instructions, recalled context as developer input, function_call and function_call_output items, and tools', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.text('Refunded.'));
    const model = new OpenAIResponsesModel({
      model: 'gpt-test',
      baseURL: server.baseURL,
      apiKey: 'sk-test',
      store: false,
      maxOutputTokens: 200,
    });
    await collect(model.stream({ messages: conversation, tools: [lookUpOrder] }));

    const body = server.requests[0]?.body;
    expect(server.requests[0]?.path).toBe('/v1/responses');
    expect(body.model).toBe('gpt-test');
    expect(body.stream).toBe(true);
    expect(body.store).toBe(false);
    expect(body.max_output_tokens).toBe(200);
    expect(body.parallel_tool_calls).toBe(true);
    expect(body.instructions).toBe('You are the billing agent.');
    expect(body.input).toEqual([
      {
        type: 'message',
        role: 'developer',
        content: `${RECALLED_CONTEXT_PREFIX}Last week the user asked about order A-1.`,
      },
      { type: 'message', role: 'user', content: 'Was I charged twice?' },
      { type: 'message', role: 'assistant', content: 'Let me check.' },
      { type: 'function_call', call_id: 'call_1', name: 'look_up_order', arguments: '{"orderId":"A-1"}' },
      { type: 'function_call_output', call_id: 'call_1', output: '{"charges":2}' },
      { type: 'message', role: 'system', content: 'The user is verified.' },
      { type: 'message', role: 'assistant', content: 'Yes, twice. Shall I refund one?' },
      { type: 'message', role: 'user', content: 'Yes please.' },
    ]);
    expect(body.tools).toEqual([{ type: 'function', ...lookUpOrder, strict: false }]);
  });

  it('yields text, then each function call with its call_id, usage and finish tool_calls', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(
      reply.toolCalls([{ id: 'call_x', name: 'look_up_order', arguments: { orderId: 'Z-9' } }], {
        text: 'One moment.',
        usage: { inputTokens: 40, outputTokens: 12 },
      }),
    );
    const model = new OpenAIResponsesModel({ model: 'gpt-test', baseURL: server.baseURL, apiKey: 'sk-test' });
    const events = await collect(model.stream({ messages: [{ role: 'user', content: 'Z-9?' }], tools: [lookUpOrder] }));
    expect(
      events
        .filter((e) => e.type === 'text.delta')
        .map((e) => e.delta)
        .join(''),
    ).toBe('One moment.');
    expect(events.slice(-3)).toEqual([
      { type: 'tool_call', toolCall: { id: 'call_x', name: 'look_up_order', arguments: '{"orderId":"Z-9"}' } },
      { type: 'usage', usage: { inputTokens: 40, outputTokens: 12, totalTokens: 52, requests: 1 } },
      { type: 'finish', finishReason: 'tool_calls' },
    ]);
  });
});

describe('client construction', () => {
  it('throws ConfigurationError naming OPENAI_API_KEY when there is no API key', () => {
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      expect(() => new OpenAIResponsesModel({ model: 'gpt-test', baseURL: 'http://127.0.0.1:9/v1' })).toThrow(
        ConfigurationError,
      );
      expect(() => new OpenAIChatModel({ model: 'gpt-test', baseURL: 'http://127.0.0.1:9/v1' })).toThrow(
        /OPENAI_API_KEY/,
      );
    } finally {
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
  });

  it('createOpenAIModel picks the API by name and rejects an unknown one', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.text('chat'), reply.text('responses'));
    const options = { model: 'gpt-test', baseURL: server.baseURL, apiKey: 'sk-test' };
    const chat = createOpenAIModel(options);
    const responses = createOpenAIModel({ ...options, api: 'responses' });
    expect(chat).toBeInstanceOf(OpenAIChatModel);
    expect(responses).toBeInstanceOf(OpenAIResponsesModel);
    await collect(chat.stream({ messages: [{ role: 'user', content: 'Hi' }], tools: [] }));
    await collect(responses.stream({ messages: [{ role: 'user', content: 'Hi' }], tools: [] }));
    expect(server.requests.map((r) => r.path)).toEqual(['/v1/chat/completions', '/v1/responses']);
    expect(() => createOpenAIModel({ ...options, api: 'completions' as 'chat' })).toThrow(
      /Unknown OpenAI api "completions"/,
    );
  });

  it('uses a given client as is', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.text('shared client'));
    const first = new OpenAIChatModel({ model: 'gpt-test', baseURL: server.baseURL, apiKey: 'sk-shared' });
    const second = new OpenAIResponsesModel({ model: 'gpt-test', client: first.client });
    expect(second.client).toBe(first.client);
    await collect(second.stream({ messages: [{ role: 'user', content: 'Hi' }], tools: [] }));
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-shared');
  });
});
