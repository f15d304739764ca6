import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { AgentExecutor, agent, ConfigurationError, InvalidInputError, type ModelStreamEvent, tool } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startAnthropicServer } from '../../../test/support/anthropicServer.js';
import { reply, startOpenAIServer } from '../../core/test/support/openaiServer.js';
import { aisdk } from '../src/index.js';
import { runAgent } from './support/runAgent.js';

async function collect(stream: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const parameters = { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] };
const lookUpOrder = { name: 'look_up_order', description: 'Finds an order.', parameters };
const refund = { name: 'refund', description: 'Refunds an order.', parameters };
const hi = [{ role: 'user' as const, content: 'Where is A-1?' }];

describe('AISDKModel toolChoice on the wire', () => {
  it("sends the option as the AI SDK's toolChoice (OpenAI-compatible tool_choice); a call's setting wins", async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.text('a'), reply.text('b'), reply.text('c'));
    const provider = createOpenAICompatible({ name: 'local', baseURL: server.baseURL, apiKey: 'sk-test' });
    const model = aisdk(provider('gpt-test'), { maxRetries: 0, toolChoice: 'required' });
    const tools = [lookUpOrder, refund];
    await collect(model.stream({ messages: hi, tools }));
    await collect(model.stream({ messages: hi, tools, settings: { toolChoice: { name: 'refund' } } }));
    await collect(model.stream({ messages: hi, tools: [], settings: { toolChoice: 'none' } }));
    expect(server.requests.map((r) => r.body.tool_choice)).toEqual([
      'required',
      { type: 'function', function: { name: 'refund' } },
      undefined,
    ]);
  });

  it("maps each choice to Anthropic's tool_choice: required → any, { name } → tool, none → none", async () => {
    await using server = await startAnthropicServer();
    server.enqueue({ text: 'a' }, { text: 'b' }, { text: 'c' });
    const anthropic = createAnthropic({ baseURL: server.baseURL, apiKey: 'sk-ant-test' });
    const model = aisdk(anthropic('claude-test'), { maxRetries: 0, toolChoice: { name: 'look_up_order' } });
    await collect(model.stream({ messages: hi, tools: [lookUpOrder] }));
    await collect(model.stream({ messages: hi, tools: [lookUpOrder], settings: { toolChoice: 'required' } }));
    await collect(model.stream({ messages: hi, tools: [lookUpOrder], settings: { toolChoice: 'none' } }));
    expect(server.requests.map((r) => r.body.tool_choice)).toEqual([
      expect.objectContaining({ type: 'tool', name: 'look_up_order' }),
      expect.objectContaining({ type: 'any' }),
      { type: 'none' },
    ]);
  });

  it('a choice naming a tool the request lacks is a named error before any HTTP call', async () => {
    await using server = await startAnthropicServer();
    const anthropic = createAnthropic({ baseURL: server.baseURL, apiKey: 'sk-ant-test' });
    expect(() => aisdk(anthropic('claude-test'), { toolChoice: 'any' as 'auto' })).toThrow(ConfigurationError);
    const model = aisdk(anthropic('claude-test'), { maxRetries: 0 });
    const error = await collect(
      model.stream({ messages: hi, tools: [lookUpOrder], settings: { toolChoice: { name: 'refnud' } } }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toContain('names tool "refnud", which the request does not offer');
    const forced = aisdk(anthropic('claude-test'), { toolChoice: { name: 'refund' } });
    const fromOption = await collect(forced.stream({ messages: hi, tools: [lookUpOrder] })).catch((e: unknown) => e);
    expect(fromOption).toBeInstanceOf(ConfigurationError);
    expect(server.requests).toHaveLength(0);
  });

  it('in the agent loop, the call after the forced tool call is not forced, so the agent answers', async () => {
    await using server = await startAnthropicServer();
    server.enqueue(
      { toolCalls: [{ id: 'toolu_1', name: 'look_up_order', input: { orderId: 'A-1' } }] },
      { text: 'A-1 has shipped.' },
    );
    const anthropic = createAnthropic({ baseURL: server.baseURL, apiKey: 'sk-ant-test' });
    const shipping = agent({
      name: 'shipping',
      description: 'Orders.',
      instructions: 'Track orders.',
      model: aisdk(anthropic('claude-test'), { maxRetries: 0, toolChoice: 'required' }),
      tools: [
        tool({
          name: 'look_up_order',
          description: 'Finds an order.',
          parameters: z.object({ orderId: z.string() }),
          execute: ({ orderId }) => `${orderId}: shipped`,
        }),
      ],
    });
    const { outcome } = await runAgent(new AgentExecutor(shipping), 'Where is A-1?');
    expect(outcome).toMatchObject({ type: 'reply', message: { content: 'A-1 has shipped.' }, usage: { requests: 2 } });
    expect(server.requests.map((r) => r.body.tool_choice?.type)).toEqual(['any', 'auto']);
  });
});
