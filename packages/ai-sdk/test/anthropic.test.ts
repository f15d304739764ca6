import { createAnthropic } from '@ai-sdk/anthropic';
import { AgentExecutor, agent, RateLimitError, tool } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startAnthropicServer } from '../../../test/support/anthropicServer.js';
import { aisdk } from '../src/index.js';
import { runAgent } from './support/runAgent.js';

/** The agent loop over `@ai-sdk/anthropic` against a loopback server speaking the Anthropic Messages API. */
describe('AISDKModel on @ai-sdk/anthropic against a loopback Anthropic Messages server', () => {
  it('streams text, runs parallel tool calls through the agent loop, and sends tool results back as tool_result blocks', async () => {
    await using server = await startAnthropicServer();
    server.enqueue(
      {
        text: 'Let me check both.',
        toolCalls: [
          { id: 'toolu_a', name: 'look_up_order', input: { orderId: 'A-1' } },
          { id: 'toolu_b', name: 'look_up_order', input: { orderId: 'B-2' } },
        ],
      },
      { text: 'A-1 shipped; B-2 is late.', usage: { input: 90, output: 12 } },
    );
    const anthropic = createAnthropic({ baseURL: server.baseURL, apiKey: 'sk-ant-test' });
    const looked: string[] = [];
    const shipping = agent({
      name: 'shipping',
      description: 'Orders.',
      instructions: 'You track orders.',
      model: aisdk(anthropic('claude-test'), { maxRetries: 0 }),
      tools: [
        tool({
          name: 'look_up_order',
          description: 'Finds an order.',
          parameters: z.object({ orderId: z.string() }),
          execute: ({ orderId }) => {
            looked.push(orderId);
            return `${orderId}: ok`;
          },
        }),
      ],
    });
    const { outcome, events } = await runAgent(new AgentExecutor(shipping), 'Where are A-1 and B-2?');

    expect(outcome).toMatchObject({ type: 'reply', message: { content: 'A-1 shipped; B-2 is late.' } });
    expect(outcome.usage).toMatchObject({ inputTokens: 110, requests: 2 });
    expect(looked.sort()).toEqual(['A-1', 'B-2']);
    expect(events.filter((e) => e.type === 'message.delta').length).toBeGreaterThan(2);
    const first = server.requests[0]!;
    expect(first.path).toBe('/v1/messages');
    expect(first.headers['x-api-key']).toBe('sk-ant-test');
    expect(first.body).toMatchObject({
      model: 'claude-test',
      stream: true,
      system: [{ type: 'text', text: 'You track orders.' }],
    });
    expect(first.body.tools).toEqual([
      expect.objectContaining({
        name: 'look_up_order',
        description: 'Finds an order.',
        input_schema: expect.objectContaining({ type: 'object' }),
      }),
    ]);
    const second = server.requests[1]!.body.messages;
    expect(second[1]).toMatchObject({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me check both.' },
        { type: 'tool_use', id: 'toolu_a', name: 'look_up_order', input: { orderId: 'A-1' } },
        { type: 'tool_use', id: 'toolu_b', name: 'look_up_order', input: { orderId: 'B-2' } },
      ],
    });
    expect(second[2]).toMatchObject({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_a', content: 'A-1: ok' },
        { type: 'tool_result', tool_use_id: 'toolu_b', content: 'B-2: ok' },
      ],
    });
  });

  it('maps an HTTP 429 from the Messages API to RateLimitError with the request id', async () => {
    await using server = await startAnthropicServer();
    server.enqueue({
      status: 429,
      errorType: 'rate_limit_error',
      message: 'Number of requests has exceeded your rate limit.',
    });
    const model = aisdk(createAnthropic({ baseURL: server.baseURL, apiKey: 'sk-ant-test' })('claude-test'), {
      maxRetries: 0,
    });
    let failure: unknown;
    try {
      for await (const _ of model.stream({ messages: [{ role: 'user', content: 'hi' }], tools: [] })) {
        // read to the end
      }
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(RateLimitError);
    expect((failure as RateLimitError).status).toBe(429);
    expect((failure as RateLimitError).requestId).toBe('req_1');
    expect((failure as Error).message).toMatch(/rate limit/);
  });
});

describe('structured output on @ai-sdk/anthropic', () => {
  it("sends the agent's outputType as Anthropic's JSON schema output format and returns the typed value", async () => {
    await using server = await startAnthropicServer();
    server.enqueue({ text: '{"topic":"billing","urgent":true}' });
    const anthropic = createAnthropic({ baseURL: server.baseURL, apiKey: 'sk-ant-test' });
    const triage = agent({
      name: 'triage',
      description: 'Sorts requests.',
      instructions: 'Classify.',
      model: aisdk(anthropic('claude-sonnet-4-5'), { maxRetries: 0 }),
      outputType: z.object({ topic: z.enum(['billing', 'shipping']), urgent: z.boolean() }),
    });
    const { outcome } = await runAgent(new AgentExecutor(triage), 'I was charged twice!');
    expect(outcome.type === 'reply' && outcome.structuredOutput).toEqual({ topic: 'billing', urgent: true });
    expect(server.requests[0]!.body.output_config.format).toMatchObject({
      type: 'json_schema',
      schema: expect.objectContaining({ required: ['topic', 'urgent'] }),
    });
  });
});
