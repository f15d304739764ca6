import OpenAI from 'openai';
import {
  AbortedError,
  AuthenticationError,
  BadRequestError,
  BatonError,
  ModelProviderError,
  type ModelProviderErrorOptions,
  RateLimitError,
  TimeoutError,
} from '../errors.js';

/**
 * Turns what the `openai` SDK throws into a Baton error (the SDK has already retried):
 * 429 → `RateLimitError`, 401/403 → `AuthenticationError`, 400/404/422 → `BadRequestError`,
 * `APIConnectionTimeoutError` → `TimeoutError`, anything else → `ModelProviderError`; an aborted
 * `signal` → `AbortedError`. Each keeps the HTTP status, the `x-request-id` and the SDK error as `cause`.
 * Status codes as documented in https://platform.openai.com/docs/guides/error-codes
 *
 * @param error what the SDK threw
 * @param where e.g. `'OpenAI chat completion for model "gpt-4.1-mini"'`, used in the message
 * @param signal the call's abort signal
 * @returns a {@link BatonError}; a Baton error passes through unchanged
 * @example
 * ```ts
 * try { await client.chat.completions.create(params); }
 * catch (error) { throw toBatonError(error, 'OpenAI chat completion', signal); }
 * ```
 */
export function toBatonError(error: unknown, where: string, signal?: AbortSignal): BatonError {
  if (error instanceof BatonError) return error;
  if (signal?.aborted || error instanceof OpenAI.APIUserAbortError) {
    return new AbortedError(`${where} was cancelled.`, { cause: signal?.reason ?? error });
  }
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return new TimeoutError(`${where} timed out after the client's retries. Raise the timeout option (milliseconds) or maxRetries.`, {
      cause: error,
    });
  }
  if (error instanceof OpenAI.APIConnectionError) {
    return new ModelProviderError(`${where} could not connect: ${error.message} Check baseURL / OPENAI_BASE_URL and the network.`, {
      cause: error,
    });
  }
  if (error instanceof OpenAI.APIError) {
    const options: ModelProviderErrorOptions = { cause: error };
    if (error.status !== undefined) options.status = error.status;
    if (typeof error.requestID === 'string') options.requestId = error.requestID;
    const detail = `${where} failed${error.status === undefined ? '' : ` with HTTP ${error.status}`}${
      typeof error.requestID === 'string' ? ` (request id ${error.requestID})` : ''
    }: ${providerMessage(error)}`;
    switch (error.status) {
      case 429:
        return new RateLimitError(`${detail} The rate limit or quota was still exceeded after retries; raise maxRetries or slow down.`, options);
      case 401:
      case 403:
        return new AuthenticationError(`${detail} Check the apiKey option / OPENAI_API_KEY and the key's permissions.`, options);
      case 400:
      case 404:
      case 422:
        return new BadRequestError(`${detail} The provider rejected the request; check the model name and parameters.`, options);
      default:
        return new ModelProviderError(detail, options);
    }
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ModelProviderError(`${where} failed: ${message}`, { cause: error });
}

/** The provider's own error text, without the SDK's status prefix. */
function providerMessage(error: InstanceType<typeof OpenAI.APIError>): string {
  const body = error.error as { message?: unknown } | undefined;
  if (body !== undefined && typeof body.message === 'string') return ensurePeriod(body.message);
  return ensurePeriod(error.message);
}

function ensurePeriod(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}
