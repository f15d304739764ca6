import {
  AbortedError,
  BatonError,
  ConfigurationError,
  ModelProviderError,
  type ModelProviderErrorOptions,
  providerErrorFor,
  TimeoutError,
} from '@baton/core';

/** The fields of an AI SDK `APICallError` (name `AI_APICallError`), read by shape. */
interface ApiCallErrorShape {
  statusCode?: unknown;
  responseHeaders?: unknown;
  responseBody?: unknown;
  message: string;
}

/**
 * Turns what the AI SDK reports (a thrown error or a stream `error` part; its own retries already
 * made) into a Baton error, by shape (`name`, `statusCode`), never by class identity:
 * `AI_RetryError` is judged by its `lastError`; an `AI_APICallError` by its HTTP status (429 →
 * `RateLimitError`, 401/403 → `AuthenticationError`, 400/404/422 → `BadRequestError`, 408 →
 * `TimeoutError`, else `ModelProviderError`, with `status` and the provider's request id);
 * `AI_LoadAPIKeyError` → `ConfigurationError`; an aborted `signal` → `AbortedError`; a
 * `TimeoutError` DOMException → `TimeoutError`; anything else → `ModelProviderError`.
 * Error names as documented in https://ai-sdk.dev/docs/reference/ai-sdk-errors
 *
 * @param error what the AI SDK threw or streamed
 * @param where e.g. `'AI SDK call to model "claude-sonnet-4-5"'`, used in the message
 * @param signal the call's abort signal
 * @example
 * ```ts
 * import { toBatonError } from '@baton/ai-sdk';
 * throw toBatonError(part.error, 'AI SDK call to model "claude-sonnet-4-5"', signal);
 * ```
 */
export function toBatonError(error: unknown, where: string, signal?: AbortSignal): BatonError {
  if (error instanceof BatonError) return error;
  if (signal?.aborted) return new AbortedError(`${where} was cancelled.`, { cause: signal.reason ?? error });
  const name = error instanceof Error ? error.name : undefined;
  if (name === 'AI_RetryError') {
    const last = (error as Error & { lastError?: unknown }).lastError;
    const mapped = last === undefined ? undefined : toBatonError(last, where, signal);
    if (mapped !== undefined) return rewrap(mapped, error);
  }
  if (name === 'AbortError') return new AbortedError(`${where} was cancelled.`, { cause: error });
  if (name === 'TimeoutError')
    return new TimeoutError(`${where} timed out. Raise the timeout or retry.`, { cause: error });
  if (name === 'AI_LoadAPIKeyError') {
    return new ConfigurationError(
      `${where} has no API key: ${(error as Error).message} Pass apiKey to the provider or set its environment variable.`,
      { cause: error },
    );
  }
  if (name === 'AI_APICallError') {
    const api = error as Error & ApiCallErrorShape;
    const status = typeof api.statusCode === 'number' ? api.statusCode : undefined;
    const requestId = requestIdOf(api.responseHeaders);
    const options: ModelProviderErrorOptions = { cause: error };
    if (status !== undefined) options.status = status;
    if (requestId !== undefined) options.requestId = requestId;
    const detail = `${where} failed${status === undefined ? '' : ` with HTTP ${status}`}${requestId === undefined ? '' : ` (request id ${requestId})`}: ${withPeriod(api.message)}`;
    return providerErrorFor(status, detail, options, "the provider's API key");
  }
  const message = error instanceof Error ? error.message : typeof error === 'string' ? error : JSON.stringify(error);
  return new ModelProviderError(`${where} failed: ${message}`, { cause: error });
}

/** The same Baton error with the AI SDK's `RetryError` as its cause (it lists every attempt). */
function rewrap(mapped: BatonError, retryError: unknown): BatonError {
  if (!(mapped instanceof ModelProviderError)) return mapped;
  const options: ModelProviderErrorOptions = { cause: retryError };
  if (mapped.status !== undefined) options.status = mapped.status;
  if (mapped.requestId !== undefined) options.requestId = mapped.requestId;
  const Kind = mapped.constructor as new (message: string, options: ModelProviderErrorOptions) => ModelProviderError;
  return new Kind(mapped.message, options);
}

/** The provider's request id from its response headers (`request-id`, `x-request-id`). */
function requestIdOf(headers: unknown): string | undefined {
  if (headers === null || typeof headers !== 'object') return undefined;
  const record = headers as Record<string, unknown>;
  for (const key of ['request-id', 'x-request-id']) if (typeof record[key] === 'string') return record[key] as string;
  return undefined;
}

function withPeriod(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}
