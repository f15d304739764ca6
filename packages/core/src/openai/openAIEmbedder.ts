import type OpenAI from 'openai';
import type { Embedder, EmbedOptions } from '../models/embedder.js';
import { ConfigurationError, InvalidInputError, ModelProviderError } from '../errors.js';
import { createOpenAIClient, type OpenAIModelOptions, requestOptions } from './openAIModelOptions.js';
import { toBatonError } from './toBatonError.js';

/** The embedding model {@link OpenAIEmbedder} uses unless told otherwise. */
export const DEFAULT_EMBEDDING_MODEL = 'text-embedding-3-small';

/**
 * Options of {@link OpenAIEmbedder}. `apiKey` and `baseURL` default, through the `openai` SDK, to
 * `OPENAI_API_KEY` and `OPENAI_BASE_URL`; retries and timeouts are the SDK's own.
 */
export interface OpenAIEmbedderOptions {
  /** Embedding model (default `'text-embedding-3-small'`). */
  model?: string;
  /** Shortens the vectors to this many dimensions (`text-embedding-3-*` and later only). */
  dimensions?: number;
  /** API key (default: `OPENAI_API_KEY`). Ignored when `client` is given. */
  apiKey?: string;
  /** Base URL of any OpenAI-compatible server, e.g. `'http://127.0.0.1:8080/v1'`. Ignored when `client` is given. */
  baseURL?: string;
  /** A ready `OpenAI` client to use instead of building one. */
  client?: OpenAI;
  /** How many times the SDK retries a failed call (429, 408, 409, 5xx, connection errors); SDK default 2. */
  maxRetries?: number;
  /** Per-attempt timeout in milliseconds; SDK default 600 000. */
  timeout?: number;
  /** Most texts per request (default 256; the API allows 2 048). */
  maxBatchSize?: number;
  /**
   * Most characters per request (default 600 000, about 150 000 tokens at ~4 characters per token,
   * half the API's 300 000-token cap per request). A single longer text is sent alone.
   */
  maxBatchChars?: number;
}

/**
 * An {@link Embedder} on OpenAI's embeddings API (`POST /v1/embeddings`, any OpenAI-compatible
 * `baseURL`). Texts are sent in batches of at most `maxBatchSize` texts and `maxBatchChars`
 * characters, one request at a time, and the vectors come back in the order of the texts.
 *
 * @throws {ConfigurationError} from the constructor for a non-positive `dimensions`, `maxBatchSize`
 *   or `maxBatchChars`, or when no API key is given and `OPENAI_API_KEY` is not set
 * @example
 * ```ts
 * import { OpenAIEmbedder } from '@baton/core/openai';
 * const embedder = new OpenAIEmbedder({ model: 'text-embedding-3-small' });
 * const vectors = await embedder.embed(['double charge on order 1234', 'where is my parcel?']);
 * vectors.length; // 2
 * ```
 */
export class OpenAIEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions?: number;
  readonly #client: OpenAI;
  readonly #connection: OpenAIModelOptions;
  readonly #maxBatchSize: number;
  readonly #maxBatchChars: number;

  constructor(options: OpenAIEmbedderOptions = {}) {
    this.model = options.model ?? DEFAULT_EMBEDDING_MODEL;
    for (const key of ['dimensions', 'maxBatchSize', 'maxBatchChars'] as const) {
      const value = options[key];
      if (value !== undefined && !(Number.isInteger(value) && value > 0)) {
        throw new ConfigurationError(
          `OpenAIEmbedder option ${key} must be a positive integer, got ${JSON.stringify(value)}.`,
        );
      }
    }
    if (options.dimensions !== undefined) this.dimensions = options.dimensions;
    this.#maxBatchSize = options.maxBatchSize ?? 256;
    this.#maxBatchChars = options.maxBatchChars ?? 600_000;
    const connection: OpenAIModelOptions = { model: this.model };
    if (options.client !== undefined) connection.client = options.client;
    if (options.apiKey !== undefined) connection.apiKey = options.apiKey;
    if (options.baseURL !== undefined) connection.baseURL = options.baseURL;
    if (options.maxRetries !== undefined) connection.maxRetries = options.maxRetries;
    if (options.timeout !== undefined) connection.timeout = options.timeout;
    this.#connection = connection;
    this.#client = createOpenAIClient(connection);
  }

  /**
   * Embeds `texts`, batching requests.
   *
   * @param texts non-empty strings
   * @returns one vector per text, in the order of `texts` (`[]` for no texts, without a request)
   * @throws {InvalidInputError} when a text is not a non-empty string (naming its index)
   * @throws {RateLimitError | AuthenticationError | BadRequestError | TimeoutError | ModelProviderError} when the API fails
   *   (after the SDK's retries) or answers with the wrong number of vectors
   * @throws {AbortedError} when `options.signal` aborts
   */
  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<number[][]> {
    texts.forEach((text, index) => {
      if (typeof text !== 'string' || text.trim() === '') {
        throw new InvalidInputError(
          `Text #${index} to embed is ${JSON.stringify(text)}: the embeddings API rejects empty input. Pass non-empty strings only.`,
        );
      }
    });
    const vectors: number[][] = [];
    for (const batch of this.#batches(texts)) vectors.push(...(await this.#embedBatch(batch, options.signal)));
    return vectors;
  }

  *#batches(texts: readonly string[]): Generator<string[]> {
    let batch: string[] = [];
    let chars = 0;
    for (const text of texts) {
      if (batch.length > 0 && (batch.length >= this.#maxBatchSize || chars + text.length > this.#maxBatchChars)) {
        yield batch;
        batch = [];
        chars = 0;
      }
      batch.push(text);
      chars += text.length;
    }
    if (batch.length > 0) yield batch;
  }

  async #embedBatch(batch: string[], signal: AbortSignal | undefined): Promise<number[][]> {
    const where = `OpenAI embeddings for model ${JSON.stringify(this.model)}`;
    const params: OpenAI.EmbeddingCreateParams = { model: this.model, input: batch, encoding_format: 'float' };
    if (this.dimensions !== undefined) params.dimensions = this.dimensions;
    let response: OpenAI.CreateEmbeddingResponse;
    try {
      response = await this.#client.embeddings.create(params, requestOptions(this.#connection, signal));
    } catch (error) {
      throw toBatonError(error, where, signal);
    }
    const vectors: Array<number[] | undefined> = new Array(batch.length);
    for (const item of response.data ?? []) {
      if (Number.isInteger(item.index) && item.index >= 0 && item.index < batch.length)
        vectors[item.index] = item.embedding;
    }
    const missing = vectors.findIndex((v) => !Array.isArray(v));
    const length = vectors[0]?.length;
    if (missing !== -1 || vectors.some((v) => v?.length !== length) || length === 0) {
      throw new ModelProviderError(
        `${where} answered ${response.data?.length ?? 0} vectors for ${batch.length} texts${
          missing === -1 ? ' of unequal or zero length' : ` (none for text #${missing} of the batch)`
        }; the server does not follow the embeddings API.`,
      );
    }
    return vectors as number[][];
  }
}
