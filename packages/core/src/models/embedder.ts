/** Per-call options of {@link Embedder.embed}. */
export interface EmbedOptions {
  /** Cancels the call; the embedder then throws `AbortedError`. */
  signal?: AbortSignal;
}

/**
 * Turns texts into embedding vectors, for semantic recall (episodic memory compares them by cosine
 * similarity). Implementations: `OpenAIEmbedder` (`@baton/core/openai`); any object with this shape
 * works (a local model, another provider).
 *
 * Contract: `embed(texts)` returns one vector per text, in the order of `texts`, all of the same
 * length (`dimensions` when it is set). Texts must be non-empty. Errors are Baton errors
 * (`InvalidInputError` for bad input; `RateLimitError`, `AuthenticationError`, `BadRequestError`,
 * `TimeoutError`, `ModelProviderError` from a provider; `AbortedError` when cancelled).
 *
 * @example
 * ```ts
 * import type { Embedder } from '@baton/core';
 * import { OpenAIEmbedder } from '@baton/core/openai';
 * const embedder: Embedder = new OpenAIEmbedder(); // text-embedding-3-small
 * const [vector] = await embedder.embed(['I was charged twice for order 1234']);
 * ```
 */
export interface Embedder {
  /** The embedding model's name, e.g. `'text-embedding-3-small'`; vectors of different models are not comparable. */
  readonly model: string;
  /** The length of every vector, when it is known in advance. */
  readonly dimensions?: number;
  /**
   * Embeds `texts`.
   * @param texts non-empty strings
   * @returns one vector (`number[]`) per text, in the same order
   */
  embed(texts: readonly string[], options?: EmbedOptions): Promise<number[][]>;
}
