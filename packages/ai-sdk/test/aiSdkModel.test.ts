import {
  AbortedError,
  AgentExecutor,
  AuthenticationError,
  agent,
  BadRequestError,
  ConfigurationError,
  type ModelStreamEvent,
  OutputValidationError,
  RateLimitError,
  RECALLED_CONTEXT_PREFIX,
  tool,
} from '@baton/core';
import { APICallError, LoadAPIKeyError } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AISDKModel, aisdk } from '../src/index.js';
import { scriptedLanguageModel } from './support/mockModel.js';
import { runAgent } from './support/runAgent.js';

async function collect(stream: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const lookUpOrder = {
  name: 'look_up_order',
  description: 'Finds an order.',
  parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
};

function apiError(statusCode: number, message: string, isRetryable = false): APICallError {
  return new APICallError({
    message,
    url: 'http://127.0.0.1/v1/messages',
    requestBodyValues: {},
    statusCode,
    responseHeaders: { 'request-id': 'req_mock' },
    isRetryable,
  });
}

describe('AISDKModel over the AI SDK mock language model', () => {
  it('streams text deltas, usage and a finish; maps every Baton role into the AI SDK prompt', async () => {
    const mock = scriptedLanguageModel([{ text: 'Refund issued for A-1.', usage: { input: 31, output: 7 } }]);
    const model = aisdk(mock);
    expect(model.model).toBe('mock-model');
    const events = await collect(
      model.stream({
        messages: [
          { role: 'system', content: 'You are billing.' },
          { role: 'context', content: 'Last week: order A-1.' },
          { role: 'user', content: 'Charged twice?' },
          {
            role: 'assistant',
            content: 'Checking.',
            toolCalls: [{ id: 'c1', name: 'look_up_order', arguments: '{"orderId":"A-1"}' }],
          },
          { role: 'tool', content: '{"charges":2}', toolCallId: 'c1', toolName: 'look_up_order' },
          { role: 'user', content: 'Refund please.' },
        ],
        tools: [lookUpOrder],
        settings: { temperature: 0.1, topP: 0.9, maxOutputTokens: 200 },
      }),
    );

    expect(
      events
        .filter((e) => e.type === 'text.delta')
        .map((e) => (e as { delta: string }).delta)
        .join(''),
    ).toBe('Refund issued for A-1.');
    expect(events.filter((e) => e.type === 'text.delta').length).toBeGreaterThan(1);
    expect(events.slice(-2)).toEqual([
      { type: 'usage', usage: { inputTokens: 31, outputTokens: 7, totalTokens: 38, requests: 1 } },
      { type: 'finish', finishReason: 'stop' },
    ]);
    const call = mock.doStreamCalls[0]!;
    expect(call.temperature).toBe(0.1);
    expect(call.topP).toBe(0.9);
    expect(call.maxOutputTokens).toBe(200);
    expect(call.tools).toEqual([
      expect.objectContaining({
        type: 'function',
        name: 'look_up_order',
        description: 'Finds an order.',
        inputSchema: lookUpOrder.parameters,
      }),
    ]);
    expect(call.prompt).toEqual([
      { role: 'system', content: 'You are billing.' },
      { role: 'system', content: `${RECALLED_CONTEXT_PREFIX}Last week: order A-1.` },
      { role: 'user', content: [{ type: 'text', text: 'Charged twice?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'look_up_order', input: { orderId: 'A-1' } },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'look_up_order',
            output: { type: 'text', value: '{"charges":2}' },
          },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'Refund please.' }] },
    ]);
  });

  it('gives parallel tool calls whole, with their arguments as JSON text, and keeps malformed arguments raw', async () => {
    const mock = scriptedLanguageModel([
      {
        toolCalls: [
          { id: 'c1', name: 'look_up_order', input: '{"orderId":"A-1"}' },
          { id: 'c2', name: 'look_up_order', input: '{"orderId":"B-2"}' },
          { id: 'c3', name: 'look_up_order', input: '{"orderId":' },
        ],
      },
    ]);
    const events = await collect(
      new AISDKModel(mock).stream({ messages: [{ role: 'user', content: 'A-1, B-2?' }], tools: [lookUpOrder] }),
    );
    expect(events.filter((e) => e.type === 'tool_call')).toEqual([
      { type: 'tool_call', toolCall: { id: 'c1', name: 'look_up_order', arguments: '{"orderId":"A-1"}' } },
      { type: 'tool_call', toolCall: { id: 'c2', name: 'look_up_order', arguments: '{"orderId":"B-2"}' } },
      { type: 'tool_call', toolCall: { id: 'c3', name: 'look_up_order', arguments: '{"orderId":' } },
    ]);
    expect(events.at(-1)).toEqual({ type: 'finish', finishReason: 'tool_calls' });
  });

  it('sends an outputSchema as the JSON response format', async () => {
    const mock = scriptedLanguageModel([{ text: '{"ok":true}' }]);
    const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };
    await collect(
      new AISDKModel(mock).stream({
        messages: [{ role: 'user', content: 'ok?' }],
        tools: [],
        outputSchema: { name: 'triage_output', schema },
      }),
    );
    expect(mock.doStreamCalls[0]!.responseFormat).toEqual({ type: 'json', schema, name: 'triage_output' });
  });

  it.each([
    [429, RateLimitError],
    [401, AuthenticationError],
    [400, BadRequestError],
  ] as const)('maps an APICallError with HTTP %i to %o, keeping the status and request id', async (status, kind) => {
    const model = new AISDKModel(scriptedLanguageModel([{ error: apiError(status, 'nope') }]), { maxRetries: 0 });
    const failure = await collect(model.stream({ messages: [{ role: 'user', content: 'hi' }], tools: [] })).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(kind);
    expect((failure as RateLimitError).constructor).toBe(kind);
    expect((failure as RateLimitError).status).toBe(status);
    expect((failure as RateLimitError).requestId).toBe('req_mock');
  });

  it('maps retries exhausted on 429 (the AI SDK RetryError) to RateLimitError after the retries', async () => {
    const mock = scriptedLanguageModel([
      { error: apiError(429, 'slow down', true) },
      { error: apiError(429, 'slow down', true) },
    ]);
    const model = new AISDKModel(mock, { maxRetries: 1 });
    const failure = await collect(model.stream({ messages: [{ role: 'user', content: 'hi' }], tools: [] })).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(RateLimitError);
    expect((failure as RateLimitError).status).toBe(429);
    expect(((failure as RateLimitError).cause as Error).name).toBe('AI_RetryError');
    expect(mock.doStreamCalls).toHaveLength(2);
  });

  it('maps an error streamed mid-answer and a missing API key', async () => {
    const streamed = new AISDKModel(
      scriptedLanguageModel([{ text: 'Hal', streamError: apiError(500, 'overloaded') }]),
      { maxRetries: 0 },
    );
    const failure = await collect(streamed.stream({ messages: [{ role: 'user', content: 'hi' }], tools: [] })).catch(
      (error: unknown) => error,
    );
    expect((failure as RateLimitError).status).toBe(500);
    expect((failure as Error).message).toMatch(/overloaded/);

    const keyless = new AISDKModel(
      scriptedLanguageModel([{ error: new LoadAPIKeyError({ message: 'ANTHROPIC_API_KEY is missing.' }) }]),
      { maxRetries: 0 },
    );
    await expect(collect(keyless.stream({ messages: [{ role: 'user', content: 'hi' }], tools: [] }))).rejects.toThrow(
      ConfigurationError,
    );
  });

  it('stops with AbortedError when the signal aborts mid-stream', async () => {
    const controller = new AbortController();
    const model = new AISDKModel(scriptedLanguageModel([{ text: 'partial', stall: true }]));
    const run = collect(
      model.stream({ messages: [{ role: 'user', content: 'hi' }], tools: [], signal: controller.signal }),
    ).catch((error: unknown) => error);
    setTimeout(() => controller.abort(new Error('user left')), 30);
    expect(await run).toBeInstanceOf(AbortedError);
  });
});

describe('an agent on AISDKModel', () => {
  it('runs tools through the agent loop and returns a structured answer (one invalid answer retried)', async () => {
    const mock = scriptedLanguageModel([
      { toolCalls: [{ id: 'c1', name: 'look_up_order', input: '{"orderId":"A-1"}' }] },
      { text: '{"orderId":"A-1","refundCents":"x"}' },
      { text: '{"orderId":"A-1","refundCents":1299}' },
    ]);
    const billing = agent({
      name: 'billing',
      description: 'Refunds.',
      instructions: 'Refund double charges.',
      model: aisdk(mock),
      outputType: z.object({ orderId: z.string(), refundCents: z.number().int() }),
      tools: [
        tool({
          name: 'look_up_order',
          description: 'Finds an order.',
          parameters: z.object({ orderId: z.string() }),
          execute: ({ orderId }) => ({ orderId, charges: 2 }),
        }),
      ],
    });
    const { outcome, events } = await runAgent(new AgentExecutor(billing), 'Refund A-1');
    expect(outcome.type === 'reply' && outcome.structuredOutput).toEqual({ orderId: 'A-1', refundCents: 1299 });
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({
      toolName: 'look_up_order',
      content: '{"orderId":"A-1","charges":2}',
      isError: false,
    });
    expect(mock.doStreamCalls.map((c) => c.responseFormat?.type)).toEqual(['json', 'json', 'json']);
    expect(mock.doStreamCalls[2]!.prompt.at(-1)).toMatchObject({
      role: 'user',
      content: [{ type: 'text', text: expect.stringMatching(/refundCents/) }],
    });
  });

  it('fails with OutputValidationError when the retried answer is still invalid', async () => {
    const mock = scriptedLanguageModel([{ text: 'no JSON' }, { text: 'still none' }]);
    const triage = agent({
      name: 'triage',
      description: 'Sorts.',
      instructions: 'Classify.',
      model: aisdk(mock),
      outputType: z.object({ topic: z.string() }),
    });
    await expect(runAgent(new AgentExecutor(triage), 'Refund A-1')).rejects.toThrow(OutputValidationError);
  });
});
