import { BadRequestError, ContextLengthExceededError, providerErrorFor } from '@baton/core';
import { OpenAIChatModel, OpenAIResponsesModel } from '@baton/core/openai';
import { describe, expect, it } from 'vitest';
import { collect } from './support/modelStreams.js';
import { type OpenAIServer, reply, startOpenAIServer } from './support/openaiServer.js';

// llama-cpp-python 0.3.36's body for a chat request over its context window (llama_cpp/server/errors.py).
const LLAMA_CPP_MESSAGE =
  "This model's maximum context length is 512 tokens. However, you requested 1031 tokens (1031 in the messages, None in the completion). Please reduce the length of the messages or completion.";

const request = { messages: [{ role: 'user' as const, content: 'A very long question…' }], tools: [] };
const chatOn = (server: OpenAIServer) =>
  new OpenAIChatModel({ model: 'local', baseURL: server.baseURL, apiKey: 'sk-test', maxRetries: 0 });

describe('a request over the context window', () => {
  it("maps HTTP 400 with code context_length_exceeded (OpenAI's and llama-cpp-python's body) to ContextLengthExceededError", async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.error(400, LLAMA_CPP_MESSAGE, { code: 'context_length_exceeded' }));
    const error = await collect(chatOn(server).stream(request)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContextLengthExceededError);
    expect(error).toBeInstanceOf(BadRequestError); // code that catches BadRequestError still does
    expect(error).toMatchObject({ code: 'CONTEXT_LENGTH_EXCEEDED', status: 400, requestId: 'req_1' });
    expect((error as Error).message).toContain('maximum context length is 512 tokens');
    expect((error as Error).message).toContain('trim the history or lower maxOutputTokens');
    expect(server.requests).toHaveLength(1); // a 400 is not retried
  });

  it('maps the same body from the Responses API', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(
      reply.error(400, 'Your input exceeds the context window of this model.', { code: 'context_length_exceeded' }),
    );
    const model = new OpenAIResponsesModel({
      model: 'local',
      baseURL: server.baseURL,
      apiKey: 'sk-test',
      maxRetries: 0,
    });
    const error = await collect(model.stream(request)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContextLengthExceededError);
  });

  it('knows a server that sends no code by its words (vLLM, older OpenAI-compatible servers)', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(
      reply.error(400, LLAMA_CPP_MESSAGE, { code: null }),
      reply.error(400, 'Unsupported parameter: top_k.', { code: null }),
    );
    const tooLong = await collect(chatOn(server).stream(request)).catch((e: unknown) => e);
    const other = await collect(chatOn(server).stream(request)).catch((e: unknown) => e);
    expect(tooLong).toBeInstanceOf(ContextLengthExceededError);
    expect(other).toBeInstanceOf(BadRequestError);
    expect(other).not.toBeInstanceOf(ContextLengthExceededError);
  });

  it("providerErrorFor maps Anthropic's 'prompt is too long' too, and only on a 4xx that rejects the request", () => {
    const anthropic = providerErrorFor(
      400,
      'Anthropic messages call failed with HTTP 400: prompt is too long: 210000 tokens > 200000 maximum.',
      { status: 400 },
    );
    expect(anthropic).toBeInstanceOf(ContextLengthExceededError);
    const server = providerErrorFor(500, 'Call failed with HTTP 500: maximum context length unknown.', { status: 500 });
    expect(server).not.toBeInstanceOf(ContextLengthExceededError);
  });
});
