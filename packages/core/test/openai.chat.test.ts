import { InvalidInputError, type ModelMessage, type ModelRequest } from '@baton/core';
import { OpenAIChatModel, RECALLED_CONTEXT_PREFIX } from '@baton/core/openai';
import { describe, expect, it } from 'vitest';
import { collect, lookUpOrder } from './support/modelStreams.js';
import { reply, startOpenAIServer } from './support/openaiServer.js';

const conversation: ModelMessage[] = [
  { role: 'system', content: 'You are the billing agent.' },
  { role: 'context', content: 'Last week the user asked about order A-1.' },
  { role: 'user', content: 'Was I charged twice?' },
  {
    role: 'assistant',
    content: '',
    agent: 'billing',
    toolCalls: [{ id: 'call_1', name: 'look_up_order', arguments: '{"orderId":"A-1"}' }],
  },
  { role: 'tool', content: '{"charges":2}', toolCallId: 'call_1', toolName: 'look_up_order' },
  { role: 'assistant', content: 'Yes, twice. Shall I refund one?', agent: 'billing' },
  { role: 'user', content: 'Yes please.' },
];

describe('OpenAIChatModel request mapping', () => {
  it('sends system, recalled context, user, assistant tool calls, tool results and tools as Chat Completions expects', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.text('Refunded.'));
    const model = new OpenAIChatModel({
      model: 'gpt-test',
      baseURL: server.baseURL,
      apiKey: 'sk-test',
      temperature: 0.2,
      maxOutputTokens: 300,
    });
    await collect(model.stream({ messages: conversation, tools: [lookUpOrder] }));

    const body = server.requests[0]?.body;
    expect(server.requests[0]?.path).toBe('/v1/chat/completions');
    expect(body.model).toBe('gpt-test');
    expect(body.stream).toBe(true);
    expect(body.stream_options).toEqual({ include_usage: true });
    expect(body.temperature).toBe(0.2);
    expect(body.max_completion_tokens).toBe(300);
    expect(body.parallel_tool_calls).toBe(true);
    expect(body.messages).toEqual([
      { role: 'system', content: 'You are the billing agent.' },
      { role: 'system', content: `${RECALLED_CONTEXT_PREFIX}Last week the user asked about order A-1.` },
      { role: 'user', content: 'Was I charged twice?' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'look_up_order', arguments: '{"orderId":"A-1"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"charges":2}' },
      { role: 'assistant', content: 'Yes, twice. Shall I refund one?' },
      { role: 'user', content: 'Yes please.' },
    ]);
    expect(body.tools).toEqual([{ type: 'function', function: lookUpOrder }]);
  });

  it('per-call settings win over the client options: temperature, top_p, max_completion_tokens', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.text('a'));
    const model = new OpenAIChatModel({
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
    expect([body.temperature, body.top_p, body.max_completion_tokens]).toEqual([0, 0.5, 40]);
  });

  it('leaves tools and parallel_tool_calls out when there are no tools, and honours parallelToolCalls: false', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.text('a'), reply.text('b'));
    const model = new OpenAIChatModel({ model: 'gpt-test', baseURL: server.baseURL, apiKey: 'sk-test' });
    await collect(model.stream({ messages: [{ role: 'user', content: 'Hi' }], tools: [] }));
    await collect(
      model.stream({ messages: [{ role: 'user', content: 'Hi' }], tools: [lookUpOrder], parallelToolCalls: false }),
    );
    expect(server.requests[0]?.body).not.toHaveProperty('tools');
    expect(server.requests[0]?.body).not.toHaveProperty('parallel_tool_calls');
    expect(server.requests[0]?.body).not.toHaveProperty('temperature');
    expect(server.requests[1]?.body.parallel_tool_calls).toBe(false);
  });

  it('joins tool-call argument fragments by index even when the calls interleave', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(
      reply.toolCalls(
        [
          { id: 'call_a', name: 'look_up_order', arguments: { orderId: 'A-1', note: 'first call' } },
          { id: 'call_b', name: 'look_up_order', arguments: { orderId: 'B-22', note: 'second' } },
        ],
        { text: 'Checking both.', chunkSize: 3, interleaveToolCalls: true },
      ),
    );
    const model = new OpenAIChatModel({ model: 'gpt-test', baseURL: server.baseURL, apiKey: 'sk-test' });
    const events = await collect(
      model.stream({ messages: [{ role: 'user', content: 'A-1 and B-22?' }], tools: [lookUpOrder] }),
    );
    expect(events.filter((e) => e.type === 'tool_call')).toEqual([
      {
        type: 'tool_call',
        toolCall: { id: 'call_a', name: 'look_up_order', arguments: '{"orderId":"A-1","note":"first call"}' },
      },
      {
        type: 'tool_call',
        toolCall: { id: 'call_b', name: 'look_up_order', arguments: '{"orderId":"B-22","note":"second"}' },
      },
    ]);
    expect(events.at(-1)).toEqual({ type: 'finish', finishReason: 'tool_calls' });
    expect(events.map((e) => e.type).slice(-4)).toEqual(['tool_call', 'tool_call', 'usage', 'finish']);
  });

  it('rejects a tool message without toolCallId with InvalidInputError before sending anything', async () => {
    await using server = await startOpenAIServer();
    const model = new OpenAIChatModel({ model: 'gpt-test', baseURL: server.baseURL, apiKey: 'sk-test' });
    const request: ModelRequest = { messages: [{ role: 'tool', content: 'orphan result' }], tools: [] };
    const error = await collect(model.stream(request)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toContain('"orphan result"');
    expect(server.requests).toHaveLength(0);
  });

  it('rejects an unknown role with InvalidInputError quoting it', async () => {
    await using server = await startOpenAIServer();
    const model = new OpenAIChatModel({ model: 'gpt-test', baseURL: server.baseURL, apiKey: 'sk-test' });
    const robot = { role: 'robot', content: 'beep' } as unknown as ModelMessage;
    const error = await collect(model.stream({ messages: [robot], tools: [] })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toContain('unknown role "robot"');
  });

  it('uses OPENAI_API_KEY and OPENAI_BASE_URL when no apiKey or baseURL is given', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.text('from env'));
    const saved = { key: process.env.OPENAI_API_KEY, url: process.env.OPENAI_BASE_URL };
    process.env.OPENAI_API_KEY = 'sk-from-env';
    process.env.OPENAI_BASE_URL = server.baseURL;
    try {
      const model = new OpenAIChatModel({ model: 'gpt-test' });
      const events = await collect(model.stream({ messages: [{ role: 'user', content: 'Hi' }], tools: [] }));
      expect(events.filter((e) => e.type === 'text.delta').length).toBeGreaterThan(0);
      expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-from-env');
    } finally {
      restore('OPENAI_API_KEY', saved.key);
      restore('OPENAI_BASE_URL', saved.url);
    }
  });
});

function restore(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}
