import {
  AbortedError,
  BatonError,
  ContextLengthExceededError,
  ModelProviderError,
  type ModelProviderErrorOptions,
  TimeoutError,
} from '../errors.js';
import { providerErrorFor } from '../models/providerError.js';

/**
 * Turns what the `openai` SDK throws into a Baton error (the SDK has already retried):
 * 429 → `RateLimitError`, 401/403 → `AuthenticationError`, 400/404/422 → `BadRequestError` (a
 * `ContextLengthExceededError` when the body's code is `context_length_exceeded`),
 * `APIConnectionTimeoutError` → `TimeoutError`, anything else → `ModelProviderError`; an aborted
 * `signal` → `AbortedError`. Each keeps the HTTP status, the `x-request-id` and the SDK error as `cause`.
 * Status codes as documented in https://platform.openai.com/docs/guides/error-codes
 *
 * Errors are recognised by shape (their `name` and class names, a numeric `status`, `requestID` /
 * `request_id`), never by class identity, so a client of another major version of `openai` (the app's own copy, passed as
 * `client`) maps the same way.
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
  const kinds = errorKinds(error);
  if (signal?.aborted || kinds.has('APIUserAbortError') || kinds.has('AbortError')) {
    return new AbortedError(`${where} was cancelled.`, { cause: signal?.reason ?? error });
  }
  if (kinds.has('APIConnectionTimeoutError')) {
    return new TimeoutError(
      `${where} timed out after the client's retries. Raise the timeout option (milliseconds) or maxRetries.`,
      {
        cause: error,
      },
    );
  }
  if (kinds.has('APIConnectionError')) {
    return new ModelProviderError(
      `${where} could not connect: ${(error as Error).message} Check baseURL / OPENAI_BASE_URL and the network.`,
      {
        cause: error,
      },
    );
  }
  const api = apiErrorShape(error);
  if (api !== undefined) {
    const options: ModelProviderErrorOptions = { cause: error };
    if (api.status !== undefined) options.status = api.status;
    if (api.requestId !== undefined) options.requestId = api.requestId;
    const detail = `${where} failed${api.status === undefined ? '' : ` with HTTP ${api.status}`}${
      api.requestId === undefined ? '' : ` (request id ${api.requestId})`
    }: ${api.message}`;
    // OpenAI's code for it; OpenAI-compatible servers send it too, some inside the stream (no status).
    if (api.code === 'context_length_exceeded') {
      return new ContextLengthExceededError(
        `${detail} The request does not fit the model's context window; trim the history or lower maxOutputTokens.`,
        options,
      );
    }
    return providerErrorFor(api.status, detail, options, 'the apiKey option / OPENAI_API_KEY');
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ModelProviderError(`${where} failed: ${message}`, { cause: error });
}

/**
 * The names an error goes by: its `name` and the names of the classes in its prototype chain (the
 * `openai` SDK's classes do not set `name`, so `APIConnectionTimeoutError` is known by its class name).
 */
function errorKinds(error: unknown): Set<string> {
  const kinds = new Set<string>();
  if (!(error instanceof Error)) return kinds;
  kinds.add(error.name);
  for (
    let proto = Object.getPrototypeOf(error);
    proto !== null && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    const name = (proto as { constructor?: { name?: unknown } }).constructor?.name;
    if (typeof name === 'string' && name !== '') kinds.add(name);
  }
  return kinds;
}

/** What an `openai` SDK `APIError` of any major version carries, read by shape. */
function apiErrorShape(
  error: unknown,
):
  | { status: number | undefined; requestId: string | undefined; message: string; code: string | undefined }
  | undefined {
  if (!(error instanceof Error)) return undefined;
  const fields = error as Error & {
    status?: unknown;
    requestID?: unknown;
    request_id?: unknown;
    error?: unknown;
    code?: unknown;
  };
  const status = typeof fields.status === 'number' ? fields.status : undefined;
  // v5+ name it `requestID`, v4 `request_id`.
  const rawId = typeof fields.requestID === 'string' ? fields.requestID : fields.request_id;
  const requestId = typeof rawId === 'string' ? rawId : undefined;
  if (status === undefined && requestId === undefined && fields.error === undefined) return undefined;
  const body = fields.error as { message?: unknown; code?: unknown } | undefined;
  const text =
    body !== null && typeof body === 'object' && typeof body.message === 'string' ? body.message : error.message;
  // The error body's `code` (e.g. `context_length_exceeded`), which the SDK also copies to `error.code`.
  const rawCode =
    typeof fields.code === 'string' ? fields.code : body !== null && typeof body === 'object' ? body.code : undefined;
  const code = typeof rawCode === 'string' && rawCode !== '' ? rawCode : undefined;
  return { status, requestId, message: /[.!?]$/.test(text) ? text : `${text}.`, code };
}
