import { describe, expect, it } from 'vitest';
import {
  AbortedError,
  AuthenticationError,
  BadRequestError,
  ConfigurationError,
  InvalidInputError,
  ModelProviderError,
  RateLimitError,
} from '../src/index.js';
import { OpenAIEmbedder } from '../src/openai/index.js';
import { fixtureVector, startEmbeddingsServer } from './support/embeddingsServer.js';

const connect = (baseURL: string) => ({ baseURL, apiKey: 'sk-test', maxRetries: 0 });

describe('OpenAIEmbedder', () => {
  it('posts texts to /v1/embeddings with text-embedding-3-small by default and returns vectors in text order', async () => {
    await using server = await startEmbeddingsServer();
    const embedder = new OpenAIEmbedder(connect(server.baseURL));
    const texts = ['double charge on order 1234', 'where is my parcel', 'refund for the double charge'];
    const vectors = await embedder.embed(texts);

    expect(embedder.model).toBe('text-embedding-3-small');
    expect(vectors).toEqual(texts.map((t) => fixtureVector(t, 64)));
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request?.path).toBe('/v1/embeddings');
    expect(request?.headers.authorization).toBe('Bearer sk-test');
    expect(request?.body).toEqual({ model: 'text-embedding-3-small', input: texts, encoding_format: 'float' });
  });

  it('sends the model and dimensions it is given', async () => {
    await using server = await startEmbeddingsServer();
    const embedder = new OpenAIEmbedder({
      ...connect(server.baseURL),
      model: 'text-embedding-3-large',
      dimensions: 16,
    });
    const [vector] = await embedder.embed(['hello there']);
    expect(vector).toHaveLength(16);
    expect(embedder.dimensions).toBe(16);
    expect(server.requests[0]?.body).toMatchObject({ model: 'text-embedding-3-large', dimensions: 16 });
  });

  it('batches by count and by characters, keeping the order across batches', async () => {
    await using server = await startEmbeddingsServer();
    const embedder = new OpenAIEmbedder({ ...connect(server.baseURL), maxBatchSize: 2, maxBatchChars: 25 });
    const texts = ['alpha one', 'beta two', 'gamma three', 'a much longer text of thirty-odd chars', 'delta'];
    const vectors = await embedder.embed(texts);
    expect(vectors).toEqual(texts.map((t) => fixtureVector(t, 64)));
    expect(server.requests.map((r) => r.body.input)).toEqual([
      ['alpha one', 'beta two'],
      ['gamma three'],
      ['a much longer text of thirty-odd chars'],
      ['delta'],
    ]);
  });

  it('makes no request for no texts', async () => {
    await using server = await startEmbeddingsServer();
    expect(await new OpenAIEmbedder(connect(server.baseURL)).embed([])).toEqual([]);
    expect(server.requests).toHaveLength(0);
  });

  it('rejects an empty text with InvalidInputError naming its index, before any request', async () => {
    await using server = await startEmbeddingsServer();
    const embedder = new OpenAIEmbedder(connect(server.baseURL));
    await expect(embedder.embed(['fine', '  '])).rejects.toThrow(InvalidInputError);
    await expect(embedder.embed(['fine', '  '])).rejects.toThrow(/Text #1 .*empty/);
    expect(server.requests).toHaveLength(0);
  });

  it('maps HTTP errors to Baton errors with status and request id', async () => {
    await using server = await startEmbeddingsServer();
    const embedder = new OpenAIEmbedder(connect(server.baseURL));
    server.fail(
      { type: 'error', status: 401, message: 'Incorrect API key provided' },
      { type: 'error', status: 429, message: 'Rate limit reached' },
      { type: 'error', status: 400, message: "This model's maximum context length is 8192 tokens" },
      { type: 'error', status: 500, message: 'The server had an error' },
    );
    const auth = await embedder.embed(['x']).catch((e: unknown) => e);
    expect(auth).toBeInstanceOf(AuthenticationError);
    expect(auth).toMatchObject({ status: 401, requestId: 'req_1' });
    expect(String((auth as Error).message)).toContain('Incorrect API key provided');
    await expect(embedder.embed(['x'])).rejects.toBeInstanceOf(RateLimitError);
    await expect(embedder.embed(['x'])).rejects.toBeInstanceOf(BadRequestError);
    const server500 = await embedder.embed(['x']).catch((e: unknown) => e);
    expect(server500).toBeInstanceOf(ModelProviderError);
    expect(server500).toMatchObject({ status: 500 });
  });

  it('retries a 429 through the SDK and then succeeds', async () => {
    await using server = await startEmbeddingsServer();
    const embedder = new OpenAIEmbedder({ baseURL: server.baseURL, apiKey: 'sk-test', maxRetries: 1 });
    server.fail({ type: 'error', status: 429, message: 'Slow down', headers: { 'retry-after-ms': '1' } });
    expect(await embedder.embed(['retry me'])).toEqual([fixtureVector('retry me', 64)]);
    expect(server.requests).toHaveLength(2);
  });

  it('fails with ModelProviderError when the server answers fewer vectors than texts', async () => {
    await using server = await startEmbeddingsServer();
    const embedder = new OpenAIEmbedder(connect(server.baseURL));
    server.fail({ type: 'short' });
    await expect(embedder.embed(['one', 'two'])).rejects.toThrow(/answered 1 vectors for 2 texts/);
  });

  it('throws AbortedError when the signal is already aborted', async () => {
    await using server = await startEmbeddingsServer();
    const embedder = new OpenAIEmbedder(connect(server.baseURL));
    const controller = new AbortController();
    controller.abort();
    await expect(embedder.embed(['x'], { signal: controller.signal })).rejects.toBeInstanceOf(AbortedError);
  });

  it('refuses non-positive batch options with ConfigurationError', () => {
    expect(() => new OpenAIEmbedder({ apiKey: 'sk-test', maxBatchSize: 0 })).toThrow(ConfigurationError);
    expect(() => new OpenAIEmbedder({ apiKey: 'sk-test', dimensions: 1.5 })).toThrow(
      /dimensions must be a positive integer, got 1.5/,
    );
  });
});
