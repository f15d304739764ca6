import { AbortedError, AuthenticationError, BadRequestError, ModelProviderError, RateLimitError } from '@baton/core';
import { OpenAIChatModel, OpenAIResponsesModel } from '@baton/core/openai';
import type OpenAI from 'openai';
import OpenAIv4 from 'openai-v4';
import { describe, expect, it } from 'vitest';
import { collect } from './support/modelStreams.js';
import { reply, startOpenAIServer } from './support/openaiServer.js';

/**
 * An app that passes its own `openai` client of another major version (v4 here; Baton's own copy is
 * v6): errors are recognised by shape (`name`, `status`, `request_id`), not by Baton's classes.
 */
function v4Client(baseURL: string): OpenAI {
  // The v4 client is the same API at run time; its TypeScript types are v4's own.
  return new OpenAIv4({ baseURL, apiKey: 'sk-test', maxRetries: 0 }) as unknown as OpenAI;
}

describe('an app-supplied openai client of another major version (v4)', () => {
  it('streams a chat completion with tool calls through the v4 client', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(
      reply.toolCalls([{ id: 'call_1', name: 'look_up_order', arguments: '{"orderId":"A-1"}' }], { text: 'Looking.' }),
    );
    const model = new OpenAIChatModel({ model: 'gpt-test', client: v4Client(server.baseURL) });
    const events = await collect(model.stream({ messages: [{ role: 'user', content: 'Where is A-1?' }], tools: [] }));
    expect(events).toContainEqual({
      type: 'tool_call',
      toolCall: { id: 'call_1', name: 'look_up_order', arguments: '{"orderId":"A-1"}' },
    });
    expect(events.at(-1)).toEqual({ type: 'finish', finishReason: 'tool_calls' });
  });

  it.each([
    [429, RateLimitError],
    [401, AuthenticationError],
    [404, BadRequestError],
    [500, ModelProviderError],
  ] as const)('maps HTTP %i from the v4 client to %o with its status and request id', async (status, kind) => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.error(status, 'no luck', { headers: { 'x-request-id': 'req_v4' } }));
    const model = new OpenAIChatModel({ model: 'gpt-test', client: v4Client(server.baseURL), maxRetries: 0 });
    const failure = await collect(model.stream({ messages: [{ role: 'user', content: 'hi' }], tools: [] })).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(kind);
    expect((failure as ModelProviderError).constructor).toBe(kind);
    expect((failure as ModelProviderError).status).toBe(status);
    expect((failure as ModelProviderError).requestId).toBe('req_v4');
    expect((failure as Error).message).toContain('no luck');
  });

  it('maps a 429 from the Responses API through the v4 client to RateLimitError', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.error(429, 'slow down'));
    const model = new OpenAIResponsesModel({ model: 'gpt-test', client: v4Client(server.baseURL), maxRetries: 0 });
    const failure = await collect(model.stream({ messages: [{ role: 'user', content: 'hi' }], tools: [] })).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(RateLimitError);
    expect((failure as RateLimitError).status).toBe(429);
  });

  it('maps a v4 abort to AbortedError', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.stall('partial'));
    const controller = new AbortController();
    const model = new OpenAIChatModel({ model: 'gpt-test', client: v4Client(server.baseURL) });
    const run = collect(
      model.stream({ messages: [{ role: 'user', content: 'hi' }], tools: [], signal: controller.signal }),
    ).catch((error: unknown) => error);
    setTimeout(() => controller.abort(new Error('user left')), 50);
    expect(await run).toBeInstanceOf(AbortedError);
  });
});
