import {
  AuthenticationError,
  BadRequestError,
  ContextLengthExceededError,
  ModelProviderError,
  type ModelProviderErrorOptions,
  RateLimitError,
  TimeoutError,
} from '../errors.js';

/** How providers word an over-long request (OpenAI, vLLM, llama-cpp-python, Anthropic) or name it (OpenAI's code). */
const CONTEXT_LENGTH_WORDS = /maximum context length|context_length_exceeded|prompt is too long/i;

/**
 * The Baton error class for an HTTP status from any model provider, with the advice that fits it:
 * 429 → `RateLimitError`, 401/403 → `AuthenticationError`, 400/404/422 → `BadRequestError` (a
 * `ContextLengthExceededError` when `detail` carries the provider's words for an over-long request:
 * OpenAI's and OpenAI-compatible servers' "maximum context length", Anthropic's "prompt is too long"),
 * 408 → `TimeoutError`, anything else → `ModelProviderError`.
 *
 * @param status the provider's HTTP status (`undefined` when there was none)
 * @param detail the sentence naming the call and the provider's message
 * @param options the status, request id and cause to keep
 * @param credentials where the API key comes from, for the advice on 401/403 (e.g. `'ANTHROPIC_API_KEY'`)
 * @example
 * ```ts
 * import { providerErrorFor } from '@baton/core';
 * providerErrorFor(429, 'Anthropic messages call failed with HTTP 429: overloaded.', { status: 429 }).code; // 'RATE_LIMIT'
 * ```
 */
export function providerErrorFor(
  status: number | undefined,
  detail: string,
  options: ModelProviderErrorOptions,
  credentials = 'the API key',
): ModelProviderError {
  switch (status) {
    case 429:
      return new RateLimitError(
        `${detail} The rate limit or quota was still exceeded after retries; raise maxRetries or slow down.`,
        options,
      );
    case 401:
    case 403:
      return new AuthenticationError(`${detail} Check ${credentials} and the key's permissions.`, options);
    case 400:
    case 404:
    case 422:
      if (CONTEXT_LENGTH_WORDS.test(detail)) {
        return new ContextLengthExceededError(
          `${detail} The request does not fit the model's context window; trim the history or lower maxOutputTokens.`,
          options,
        );
      }
      return new BadRequestError(
        `${detail} The provider rejected the request; check the model name and parameters.`,
        options,
      );
    case 408:
      return new TimeoutError(`${detail} The provider timed out; raise the timeout or retry.`, options);
    default:
      return new ModelProviderError(detail, options);
  }
}
