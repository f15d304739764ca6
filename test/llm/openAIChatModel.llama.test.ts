/**
 * Baton's OpenAI Chat client against a real OpenAI-compatible server written by others:
 * llama-cpp-python's `llama_cpp.server` serving SmolLM2-135M-Instruct (see test/support/llamaServer.ts).
 * A 135M model says little of sense, so these tests assert the wire and what Baton makes of it
 * (chunks, tool-call deltas, finish reasons, usage, the error), never the wording.
 */
import {
  ContextLengthExceededError,
  type ModelMessage,
  ModelProviderError,
  type ModelStreamEvent,
  type ToolChoice,
  type ToolDefinition,
} from '@baton/core';
import { OpenAIChatModel, toBatonError, toChatMessages } from '@baton/core/openai';
import { describe, expect, it } from 'vitest';
import { llamaTestServer } from '../support/llamaTestServer.js';

const server = llamaTestServer();

const lookUpOrder: ToolDefinition = {
  name: 'look_up_order',
  description: 'Finds an order by its id.',
  parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
};

const question: ModelMessage[] = [
  { role: 'system', content: 'You are a helpful assistant.' },
  { role: 'user', content: 'Where is my order A-17?' },
];

/**
 * A chat model on the server. llama-cpp-python reads `max_tokens` (not `max_completion_tokens`, which
 * Baton's `maxOutputTokens` sends), so it goes in `extraBody`.
 */
function chatModel(
  extraBody: Record<string, unknown> = {},
  options: { toolChoice?: ToolChoice } = {},
): OpenAIChatModel {
  return new OpenAIChatModel({
    model: server.model,
    baseURL: server.baseURL,
    apiKey: 'sk-local',
    temperature: 0,
    maxRetries: 0,
    extraBody: { max_tokens: 24, ...extraBody },
    ...options,
  });
}

async function collect(stream: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('OpenAIChatModel on llama-cpp-python', () => {
  it('streams a reply as several text deltas and ends with one finish', async () => {
    const events = await collect(chatModel().stream({ messages: question, tools: [] }));
    const deltas = events.filter((e) => e.type === 'text.delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(events.filter((e) => e.type === 'tool_call')).toEqual([]);
    expect(events.at(-1)?.type).toBe('finish');
    expect(events.filter((e) => e.type === 'finish')).toHaveLength(1);
    expect(['stop', 'length']).toContain((events.at(-1) as { finishReason: string }).finishReason);
  });

  it('the server streams tool-call deltas for a named tool_choice; Baton joins them into one tool call', async () => {
    // The wire, through the SDK client Baton uses: the call's name, then its arguments in fragments.
    const model = chatModel({ max_tokens: 48 });
    const chunks = await model.client.chat.completions.create({
      model: server.model,
      messages: toChatMessages(question),
      tools: [{ type: 'function', function: lookUpOrder }],
      tool_choice: { type: 'function', function: { name: 'look_up_order' } },
      max_tokens: 48,
      stream: true,
    } as Parameters<typeof model.client.chat.completions.create>[0] & { stream: true });
    const fragments: { name?: string; arguments?: string; id?: string }[] = [];
    const finishReasons: string[] = [];
    for await (const chunk of chunks) {
      for (const call of chunk.choices[0]?.delta?.tool_calls ?? [])
        fragments.push({ ...call.function, ...(call.id ? { id: call.id } : {}) });
      if (chunk.choices[0]?.finish_reason) finishReasons.push(chunk.choices[0].finish_reason);
    }
    expect(fragments.some((f) => f.name === 'look_up_order')).toBe(true);
    expect(fragments.filter((f) => (f.arguments ?? '') !== '').length).toBeGreaterThan(1);
    expect(finishReasons).toEqual(['tool_calls']);

    // What Baton makes of the same request, forced through `toolChoice` (per call here; a client's
    // `toolChoice` option does the same): one whole tool call with JSON arguments the schema allows.
    // Without a tool_choice this server answers in text (its chatml-function-calling handler), so the
    // tool call also shows that Baton sent the choice.
    const forced = { toolChoice: { name: 'look_up_order' } } as const;
    const events = await collect(model.stream({ messages: question, tools: [lookUpOrder], settings: forced }));
    const calls = events.flatMap((e) => (e.type === 'tool_call' ? [e.toolCall] : []));
    expect(calls).toHaveLength(1);
    expect(calls[0]?.name).toBe('look_up_order');
    expect(calls[0]?.id).toMatch(/\S/);
    expect(typeof JSON.parse(calls[0]?.arguments ?? '').orderId).toBe('string');
    expect(events.at(-1)).toEqual({ type: 'finish', finishReason: 'tool_calls' });
  });

  it("llama-cpp-python 0.3.36 does not implement tool_choice 'required': a named Baton error, never a hang", async () => {
    // Its chatml-function-calling handler asserts the choice is 'auto' when it is a string other than
    // 'none': a whole reply is an HTTP 500; a stream ends after its 200 with no chunk at all.
    const model = chatModel({}, { toolChoice: 'required' });
    const raw = await model.client.chat.completions
      .create({
        model: server.model,
        messages: toChatMessages(question),
        tools: [{ type: 'function', function: lookUpOrder }],
        tool_choice: 'required',
        max_tokens: 8,
      })
      .catch((e: unknown) => e);
    expect(raw).toMatchObject({ status: 500 });
    const error = await collect(model.stream({ messages: question, tools: [lookUpOrder] })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelProviderError);
    expect((error as Error).message).toContain('ended its stream without a finish_reason');
  });

  it('counts usage where the server reports it: in a whole reply, never in a stream', async () => {
    const model = chatModel();
    const whole = await model.client.chat.completions.create({
      model: server.model,
      messages: toChatMessages(question),
      max_tokens: 8,
    });
    expect(whole.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(whole.usage?.completion_tokens).toBeGreaterThan(0);
    expect(whole.usage?.total_tokens).toBe((whole.usage?.prompt_tokens ?? 0) + (whole.usage?.completion_tokens ?? 0));

    // llama-cpp-python 0.3.36 ignores `stream_options.include_usage`: no chunk carries usage, so Baton
    // yields no usage event and the agent loop counts the request with no tokens (see the handoff test).
    const events = await collect(model.stream({ messages: question, tools: [] }));
    expect(events.filter((e) => e.type === 'usage')).toEqual([]);
  });
});

describe('a request over the context window', () => {
  const tooLong: ModelMessage[] = [{ role: 'user', content: 'order '.repeat(server.contextTokens * 2) }];

  it("maps the server's 400 context_length_exceeded body to ContextLengthExceededError", async () => {
    const model = chatModel();
    const where = `OpenAI chat completion for model ${JSON.stringify(server.model)}`;
    // The body as the server sends it (a whole reply: the only way it reports the error with its code).
    const raw = await model.client.chat.completions
      .create({ model: server.model, messages: toChatMessages(tooLong), max_tokens: 8 })
      .catch((e: unknown) => e);
    expect(raw).toMatchObject({ status: 400, code: 'context_length_exceeded' });
    const error = toBatonError(raw, where);
    expect(error).toBeInstanceOf(ContextLengthExceededError);
    expect(error).toMatchObject({ code: 'CONTEXT_LENGTH_EXCEEDED', status: 400 });
    expect(error.message).toContain(`maximum context length is ${server.contextTokens} tokens`);
  });

  it('a streamed request over the window fails with a named Baton error, not a hang or an empty reply', async () => {
    // In a stream the server hits the limit after its 200 and ends the stream with no chunk at all (its
    // log shows the ValueError), so there is no body to map: Baton names the stream that never finished.
    const error = await collect(chatModel().stream({ messages: tooLong, tools: [] })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelProviderError);
    expect((error as Error).message).toContain('ended its stream without a finish_reason');
  });
});
