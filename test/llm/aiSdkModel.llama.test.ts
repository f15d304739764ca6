/**
 * Baton's AI SDK adapter (`aisdk`) over the AI SDK's OpenAI-compatible provider, against
 * llama-cpp-python's server (see test/support/llamaServer.ts): a streamed reply, a forced tool call
 * (`toolChoice`), a handoff driven by it, and a request over the context window. Asserts the events
 * Baton makes of the real wire, never the wording.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { aisdk, toBatonError } from '@baton/ai-sdk';
import {
  agent,
  type BatonEvent,
  ContextLengthExceededError,
  type ModelMessage,
  ModelProviderError,
  type ModelStreamEvent,
  type ToolDefinition,
} from '@baton/core';
import { HandoffBuilder, handoffToolName } from '@baton/handoff';
import { generateText } from 'ai';
import { describe, expect, it } from 'vitest';
import { llamaTestServer } from '../support/llamaTestServer.js';

const server = llamaTestServer();
const llama = createOpenAICompatible({
  name: 'llama-cpp',
  baseURL: server.baseURL,
  apiKey: 'sk-local',
  includeUsage: true,
});
const model = aisdk(llama(server.model), { maxRetries: 0, temperature: 0, maxOutputTokens: 24 });

const lookUpOrder: ToolDefinition = {
  name: 'look_up_order',
  description: 'Finds an order by its id.',
  parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
};

const question: ModelMessage[] = [
  { role: 'system', content: 'You are a helpful assistant.' },
  { role: 'user', content: 'Where is my order A-17?' },
];

async function collect(stream: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('aisdk(createOpenAICompatible(…)) on llama-cpp-python', () => {
  it('streams a reply as several text deltas, then usage and one finish', async () => {
    const events = await collect(model.stream({ messages: question, tools: [] }));
    expect(events.filter((e) => e.type === 'text.delta').length).toBeGreaterThan(1);
    expect(events.at(-1)?.type).toBe('finish');
    expect(['stop', 'length']).toContain((events.at(-1) as { finishReason: string }).finishReason);
    // The server streams no token counts, so the adapter reports the call with zero tokens.
    expect(events.find((e) => e.type === 'usage')).toMatchObject({ usage: { requests: 1 } });
  });

  it('a forced toolChoice makes the model call that tool: one whole tool call, usage and a tool_calls finish', async () => {
    const forced = aisdk(llama(server.model), {
      maxRetries: 0,
      temperature: 0,
      maxOutputTokens: 48,
      toolChoice: { name: 'look_up_order' },
    });
    // Without a tool_choice this server answers in text, so the call shows the choice went out.
    const events = await collect(forced.stream({ messages: question, tools: [lookUpOrder] }));
    const calls = events.flatMap((e) => (e.type === 'tool_call' ? [e.toolCall] : []));
    expect(calls).toHaveLength(1);
    expect(calls[0]?.name).toBe('look_up_order');
    expect(calls[0]?.id).toMatch(/\S/);
    expect(typeof JSON.parse(calls[0]?.arguments ?? '').orderId).toBe('string');
    expect(events.find((e) => e.type === 'usage')).toMatchObject({ usage: { requests: 1 } });
    expect(events.at(-1)).toEqual({ type: 'finish', finishReason: 'tool_calls' });
  });

  it("toolChoice 'required' (which llama-cpp-python 0.3.36 does not implement) fails with a named error", async () => {
    // The server asserts a string choice is 'auto'; in a stream it fails after its 200 with no chunk.
    const required = aisdk(llama(server.model), { maxRetries: 0, maxOutputTokens: 8, toolChoice: 'required' });
    const error = await collect(required.stream({ messages: question, tools: [lookUpOrder] })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelProviderError);
    expect((error as Error).message).toContain('without a finish reason');
  });
});

it("hands off to billing on the AI SDK model's forced handoff tool call, and billing answers", async () => {
  const triage = agent({
    name: 'triage',
    description: 'Routes customers.',
    instructions: 'Route the customer to the right specialist.',
    model: aisdk(llama(server.model), {
      maxRetries: 0,
      temperature: 0,
      maxOutputTokens: 48,
      toolChoice: { name: handoffToolName('billing') },
    }),
  });
  const billing = agent({
    name: 'billing',
    description: 'Refunds and double charges.',
    instructions: 'Help with billing in one short sentence.',
    // The AI SDK sends tool_choice 'auto' whenever there are tools (billing has the handoff back);
    // llama-cpp-python's 'auto' path ignores max_tokens and fails the stream, so billing answers with 'none'.
    model: aisdk(llama(server.model), { maxRetries: 0, temperature: 0, maxOutputTokens: 24, toolChoice: 'none' }),
  });
  const desk = new HandoffBuilder({ name: 'desk' }).participants(triage, billing).coordinator(triage).build();
  const session = await desk.session({ id: 'llama-aisdk-handoff', userId: 'u-1' });

  const events: BatonEvent[] = [];
  for await (const event of session.send('I was charged twice for order 1234.')) events.push(event);

  expect(events.filter((e) => e.type === 'error')).toEqual([]);
  const calls = events.flatMap((e) => (e.type === 'tool.call' ? [e.toolCall.name] : []));
  expect(calls).toEqual([handoffToolName('billing')]);
  expect(events.find((e) => e.type === 'handoff')).toMatchObject({ from: 'triage', to: 'billing' });
  const finished = events.flatMap((e) => (e.type === 'model.completed' ? [[e.agent, e.finishReason]] : []));
  expect(finished).toEqual([
    ['triage', 'tool_calls'],
    ['billing', expect.stringMatching(/^(stop|length)$/)],
  ]);
  // Both model calls are counted (the server streams no token counts).
  expect(events.find((e) => e.type === 'turn.completed')).toMatchObject({
    usage: { requests: 2 },
    nextAgent: 'triage',
  });
  expect(session.messages.at(-1)).toMatchObject({ role: 'assistant', agent: 'billing' });
});

describe('a request over the context window through the AI SDK', () => {
  const tooLong: ModelMessage[] = [{ role: 'user', content: 'order '.repeat(server.contextTokens * 2) }];

  it("maps the server's 400 (a whole reply through the AI SDK) to ContextLengthExceededError", async () => {
    // A whole reply is the only way this server reports the error with its body (see the chat client test).
    const raw = await generateText({
      model: llama(server.model),
      prompt: tooLong[0]!.content as string,
      maxOutputTokens: 8,
      maxRetries: 0,
    }).catch((e: unknown) => e);
    expect(raw).toMatchObject({ name: 'AI_APICallError', statusCode: 400 });
    const error = toBatonError(raw, `AI SDK call to model ${JSON.stringify(server.model)}`);
    expect(error).toBeInstanceOf(ContextLengthExceededError);
    expect(error).toMatchObject({ code: 'CONTEXT_LENGTH_EXCEEDED', status: 400 });
    expect(error.message).toContain(`maximum context length is ${server.contextTokens} tokens`);
  });

  it('a streamed request over the window fails with a named Baton error, not an empty reply', async () => {
    const error = await collect(model.stream({ messages: tooLong, tools: [] })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelProviderError);
    expect((error as Error).message).toContain('without a finish reason');
  });
});
