import {
  AbortedError,
  AgentExecutor,
  AuthenticationError,
  agent,
  BadRequestError,
  type ModelClient,
  ModelProviderError,
  type ModelRequest,
  RateLimitError,
  TimeoutError,
  tool,
} from '@baton/core';
import { OpenAIChatModel, type OpenAIModelOptions, OpenAIResponsesModel } from '@baton/core/openai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { collect } from './support/modelStreams.js';
import { type OpenAIServer, type RecordedOpenAIRequest, reply, startOpenAIServer } from './support/openaiServer.js';
import { runExecutor, TestJournal } from './support/testJournal.js';

/** What differs between the two APIs: how to build the client and how to read a sent body. */
interface Api {
  name: string;
  create(options: OpenAIModelOptions): ModelClient;
  /** The tool results a request body carried, as `{ callId, output }`. */
  toolResults(request: RecordedOpenAIRequest): Array<{ callId: string; output: string }>;
  /** The tool calls a request body echoed back, as `{ callId, name, arguments }`. */
  toolCalls(request: RecordedOpenAIRequest): Array<{ callId: string; name: string; arguments: string }>;
}

const apis: Api[] = [
  {
    name: 'OpenAIChatModel',
    create: (options) => new OpenAIChatModel(options),
    toolResults: (r) =>
      r.body.messages
        .filter((m: { role: string }) => m.role === 'tool')
        .map((m: { tool_call_id: string; content: string }) => ({ callId: m.tool_call_id, output: m.content })),
    toolCalls: (r) =>
      r.body.messages
        .flatMap((m: { tool_calls?: unknown[] }) => m.tool_calls ?? [])
        .map((c: { id: string; function: { name: string; arguments: string } }) => ({
          callId: c.id,
          name: c.function.name,
          arguments: c.function.arguments,
        })),
  },
  {
    name: 'OpenAIResponsesModel',
    create: (options) => new OpenAIResponsesModel(options),
    toolResults: (r) =>
      r.body.input
        .filter((i: { type?: string }) => i.type === 'function_call_output')
        .map((i: { call_id: string; output: string }) => ({ callId: i.call_id, output: i.output })),
    toolCalls: (r) =>
      r.body.input
        .filter((i: { type?: string }) => i.type === 'function_call')
        .map((i: { call_id: string; name: string; arguments: string }) => ({
          callId: i.call_id,
          name: i.name,
          arguments: i.arguments,
        })),
  },
];

const request = (signal?: AbortSignal): ModelRequest => ({
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Say hello.' },
  ],
  tools: [],
  ...(signal === undefined ? {} : { signal }),
});

/** An order-desk agent on `model`, with two tools that record the arguments they ran with. */
function orderDesk(model: ModelClient) {
  const ran: Array<{ tool: string; orderId: string }> = [];
  const lookUpOrder = tool({
    name: 'look_up_order',
    description: 'Finds an order by id.',
    parameters: z.object({ orderId: z.string() }),
    execute: async ({ orderId }) => {
      ran.push({ tool: 'look_up_order', orderId });
      return { orderId, status: 'shipped' };
    },
  });
  const refundStatus = tool({
    name: 'refund_status',
    description: 'Tells whether an order was refunded.',
    parameters: z.object({ orderId: z.string() }),
    execute: async ({ orderId }) => {
      ran.push({ tool: 'refund_status', orderId });
      return `No refund for ${orderId}.`;
    },
  });
  const desk = agent({
    name: 'orders',
    description: 'Orders.',
    instructions: 'Answer order questions.',
    tools: [lookUpOrder, refundStatus],
    model,
  });
  return { executor: new AgentExecutor(desk), ran };
}

function modelOn(api: Api, server: OpenAIServer, extra: Partial<OpenAIModelOptions> = {}): ModelClient {
  return api.create({ model: 'gpt-test', baseURL: server.baseURL, apiKey: 'sk-test', maxRetries: 0, ...extra });
}

describe.each(apis)('$name against a real OpenAI-format HTTP server', (api) => {
  it('streams text deltas in order, then usage and one finish', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(
      reply.text('Hello there, traveller!', { chunkSize: 5, usage: { inputTokens: 21, outputTokens: 6 } }),
    );
    const events = await collect(modelOn(api, server).stream(request()));

    const deltas = events.filter((e) => e.type === 'text.delta').map((e) => e.delta);
    expect(deltas).toEqual(['Hello', ' ther', 'e, tr', 'avell', 'er!']);
    expect(deltas.join('')).toBe('Hello there, traveller!');
    expect(events.filter((e) => e.type === 'usage')).toEqual([
      { type: 'usage', usage: { inputTokens: 21, outputTokens: 6, totalTokens: 27, requests: 1 } },
    ]);
    expect(events.at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });
    expect(events.filter((e) => e.type === 'finish')).toHaveLength(1);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.body.stream).toBe(true);
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-test');
  });

  it('streams a refusal as text so the user sees it', async () => {
    await using server = await startOpenAIServer();
    server.enqueue({ type: 'answer', refusal: "I can't help with that." });
    const events = await collect(modelOn(api, server).stream(request()));
    expect(
      events
        .filter((e) => e.type === 'text.delta')
        .map((e) => e.delta)
        .join(''),
    ).toBe("I can't help with that.");
  });

  it('runs two parallel tool calls through AgentExecutor and sends both results back by call id', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(
      reply.toolCalls([
        { id: 'call_order', name: 'look_up_order', arguments: { orderId: 'A-1' } },
        { id: 'call_refund', name: 'refund_status', arguments: { orderId: 'A-1' } },
      ]),
      reply.text('Order A-1 has shipped; no refund was made.'),
    );
    const { executor, ran } = orderDesk(modelOn(api, server));
    const journal = new TestJournal();
    await journal.commit([{ role: 'user', content: 'Where is order A-1, and was it refunded?' }]);

    const { outcome, events } = await runExecutor(executor, journal);

    expect(outcome.type).toBe('reply');
    expect(outcome.type === 'reply' && outcome.message.content).toBe('Order A-1 has shipped; no refund was made.');
    expect(ran).toEqual(
      expect.arrayContaining([
        { tool: 'look_up_order', orderId: 'A-1' },
        { tool: 'refund_status', orderId: 'A-1' },
      ]),
    );
    expect(ran).toHaveLength(2);
    expect(events.filter((e) => e.type === 'tool.result').map((e) => e.type === 'tool.result' && e.isError)).toEqual([
      false,
      false,
    ]);
    expect(server.requests).toHaveLength(2);
    const second = server.requests[1]!;
    expect(api.toolCalls(second)).toEqual([
      { callId: 'call_order', name: 'look_up_order', arguments: '{"orderId":"A-1"}' },
      { callId: 'call_refund', name: 'refund_status', arguments: '{"orderId":"A-1"}' },
    ]);
    expect(api.toolResults(second)).toEqual([
      { callId: 'call_order', output: '{"orderId":"A-1","status":"shipped"}' },
      { callId: 'call_refund', output: 'No refund for A-1.' },
    ]);
    expect(journal.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
  });

  it('lets the SDK retry a 429 (retry-after-ms) and succeeds', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(
      reply.error(429, 'Rate limit reached for gpt-test.', {
        errorType: 'requests',
        code: 'rate_limit_exceeded',
        headers: { 'retry-after-ms': '10' },
      }),
      reply.text('Made it.'),
    );
    const events = await collect(modelOn(api, server, { maxRetries: 1 }).stream(request()));
    expect(
      events
        .filter((e) => e.type === 'text.delta')
        .map((e) => e.delta)
        .join(''),
    ).toBe('Made it.');
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]?.body).toEqual(server.requests[0]?.body);
  });

  it('gives up on 429 after maxRetries with a RateLimitError', async () => {
    await using server = await startOpenAIServer();
    const limited = reply.error(429, 'Rate limit reached.', { headers: { 'retry-after-ms': '5' } });
    server.enqueue(limited, limited);
    const error = await collect(modelOn(api, server, { maxRetries: 1 }).stream(request())).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ status: 429, requestId: 'req_2', code: 'RATE_LIMIT' });
    expect(server.requests).toHaveLength(2);
  });

  it('turns a 401 into an AuthenticationError with status and request id', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.error(401, 'Incorrect API key provided: sk-test.', { code: 'invalid_api_key' }));
    const error = await collect(modelOn(api, server, { maxRetries: 2 }).stream(request())).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, requestId: 'req_1', code: 'AUTHENTICATION' });
    expect((error as Error).message).toContain('Incorrect API key provided: sk-test.');
    expect((error as Error).message).toContain('OPENAI_API_KEY');
    expect((error as Error).cause).toBeDefined();
    expect(server.requests).toHaveLength(1);
  });

  it('maps 403, 404 and 500 to AuthenticationError, BadRequestError and ModelProviderError', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(
      reply.error(403, 'Project lacks access.'),
      reply.error(404, 'The model `gpt-nope` does not exist.', { code: 'model_not_found' }),
      reply.error(500, 'The server had an error.', { errorType: 'server_error' }),
    );
    const model = modelOn(api, server);
    const forbidden = await collect(model.stream(request())).catch((e: unknown) => e);
    const missing = await collect(model.stream(request())).catch((e: unknown) => e);
    const broken = await collect(model.stream(request())).catch((e: unknown) => e);
    expect(forbidden).toBeInstanceOf(AuthenticationError);
    expect(forbidden).toMatchObject({ status: 403 });
    expect(missing).toBeInstanceOf(BadRequestError);
    expect((missing as Error).message).toContain('gpt-nope');
    expect(broken).toBeInstanceOf(ModelProviderError);
    expect(broken).not.toBeInstanceOf(RateLimitError);
    expect(broken).toMatchObject({ status: 500, code: 'MODEL_PROVIDER', requestId: 'req_3' });
  });

  it('answers malformed tool arguments with an error result, never runs the tool, and goes on', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(
      reply.toolCalls([{ id: 'call_bad', name: 'look_up_order', arguments: '{"orderId": "A-1' }]),
      reply.text('Sorry, which order did you mean?'),
    );
    const { executor, ran } = orderDesk(modelOn(api, server));
    const journal = new TestJournal();
    await journal.commit([{ role: 'user', content: 'Where is my order?' }]);

    const { outcome } = await runExecutor(executor, journal);

    expect(ran).toEqual([]);
    expect(outcome.type === 'reply' && outcome.message.content).toBe('Sorry, which order did you mean?');
    const [result] = api.toolResults(server.requests[1]!);
    expect(result?.callId).toBe('call_bad');
    expect(result?.output).toMatch(/^Error: the arguments of look_up_order are not valid JSON/);
    expect(api.toolCalls(server.requests[1]!)[0]?.arguments).toBe('{"orderId": "A-1');
    expect(journal.messages.find((m) => m.role === 'tool')?.isError).toBe(true);
  });

  it('turns an error reported inside the stream into a ModelProviderError with the provider message', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.streamError('The model overloaded mid-answer.', 'Part of an ans'));
    const error = await collect(modelOn(api, server).stream(request())).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelProviderError);
    expect((error as Error).message).toContain('The model overloaded mid-answer.');
  });

  it('refuses a stream that ends without finishing, with a ModelProviderError', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.cut('Part of an ans'));
    const error = await collect(modelOn(api, server).stream(request())).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelProviderError);
    expect((error as Error).message).toMatch(/incomplete/);
  });

  it('throws AbortedError when the signal aborts mid-stream', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.stall('Partial answer'));
    const controller = new AbortController();
    const seen: string[] = [];
    const error = await (async () => {
      for await (const event of modelOn(api, server).stream(request(controller.signal))) {
        if (event.type === 'text.delta') {
          seen.push(event.delta);
          controller.abort();
        }
      }
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortedError);
    expect(seen.length).toBeGreaterThan(0);
  });

  it('throws AbortedError for a signal aborted before the call', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.text('never sent'));
    const error = await collect(modelOn(api, server).stream(request(AbortSignal.abort()))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortedError);
  });

  it('throws TimeoutError when the server answers later than the timeout', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.text('too late', { delayMs: 5_000 }));
    const error = await collect(modelOn(api, server, { timeout: 150 }).stream(request())).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toContain('timeout');
  });
});
