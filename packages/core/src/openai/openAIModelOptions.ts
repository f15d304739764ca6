import OpenAI from 'openai';
import { ConfigurationError } from '../errors.js';
import type { ToolChoice } from '../models/toolChoice.js';

/**
 * Options shared by {@link OpenAIChatModel} and {@link OpenAIResponsesModel}.
 *
 * `apiKey` and `baseURL` default, through the `openai` SDK, to the `OPENAI_API_KEY` and
 * `OPENAI_BASE_URL` environment variables. Retries (with the server's `retry-after-ms` /
 * `retry-after` honoured) and timeouts are the SDK's own.
 *
 * @example
 * ```ts
 * import { OpenAIChatModel, type OpenAIModelOptions } from '@baton/core/openai';
 * const options: OpenAIModelOptions = { model: 'gpt-4.1-mini', maxRetries: 3, timeout: 30_000, temperature: 0 };
 * const model = new OpenAIChatModel(options);
 * ```
 */
export interface OpenAIModelOptions {
  /** The model name sent to the API, e.g. `'gpt-4.1-mini'`. */
  model: string;
  /** API key (default: `OPENAI_API_KEY`). Ignored when `client` is given. */
  apiKey?: string;
  /** Base URL of any OpenAI-compatible server, e.g. `'http://127.0.0.1:8080/v1'` (default: `OPENAI_BASE_URL`, else OpenAI). Ignored when `client` is given. */
  baseURL?: string;
  /** A ready `OpenAI` client to use instead of building one (for shared connection settings, Azure, proxies). */
  client?: OpenAI;
  /** How many times the SDK retries a failed call (429, 408, 409, 5xx, connection errors); SDK default 2. */
  maxRetries?: number;
  /** Per-attempt timeout in milliseconds; SDK default 600 000 (10 minutes). */
  timeout?: number;
  /** Sampling temperature, 0–2. Omitted from the request when not set. */
  temperature?: number;
  /** Upper bound of generated tokens per call (`max_completion_tokens` / `max_output_tokens`). */
  maxOutputTokens?: number;
  /** Whether the model may return several tool calls in one response (default: the request's setting, else true). */
  parallelToolCalls?: boolean;
  /**
   * The default `tool_choice` (`'auto'`, `'required'`, `'none'` or `{ name }`; see `ToolChoice`); a call's
   * `settings.toolChoice` wins. Sent only when the request has tools; a forcing choice is dropped after the
   * agent's tool calls in a turn. Checked when the client is built (`ConfigurationError`).
   */
  toolChoice?: ToolChoice;
  /** Extra body fields sent as they are (provider-specific parameters such as `reasoning_effort`). */
  extraBody?: Record<string, unknown>;
}

/**
 * The `openai` client an {@link OpenAIModelOptions} describes: `options.client` itself, or a new one
 * built from `apiKey`, `baseURL`, `maxRetries` and `timeout`.
 *
 * @throws {ConfigurationError} when no API key is given and `OPENAI_API_KEY` is not set
 * @example
 * ```ts
 * const client = createOpenAIClient({ model: 'gpt-4.1-mini', baseURL: 'http://127.0.0.1:8080/v1', apiKey: 'sk-local' });
 * ```
 */
export function createOpenAIClient(options: OpenAIModelOptions): OpenAI {
  if (options.client !== undefined) return options.client;
  const clientOptions: ConstructorParameters<typeof OpenAI>[0] = {};
  if (options.apiKey !== undefined) clientOptions.apiKey = options.apiKey;
  if (options.baseURL !== undefined) clientOptions.baseURL = options.baseURL;
  if (options.maxRetries !== undefined) clientOptions.maxRetries = options.maxRetries;
  if (options.timeout !== undefined) clientOptions.timeout = options.timeout;
  try {
    return new OpenAI(clientOptions);
  } catch (cause) {
    throw new ConfigurationError(
      `Cannot create the OpenAI client for model ${JSON.stringify(options.model)}: ${(cause as Error).message} Pass { apiKey } or set OPENAI_API_KEY.`,
      { cause },
    );
  }
}

/** The `openai` SDK's per-request options (`signal`, `maxRetries`, `timeout`, …). */
export type SdkRequestOptions = NonNullable<Parameters<OpenAI['chat']['completions']['create']>[1]>;

/**
 * Per-request SDK options: the caller's abort signal plus `maxRetries` / `timeout`, so that they
 * also apply to a client passed in `options.client`.
 */
export function requestOptions(options: OpenAIModelOptions, signal: AbortSignal | undefined): SdkRequestOptions {
  const out: SdkRequestOptions = {};
  if (signal !== undefined) out.signal = signal;
  if (options.maxRetries !== undefined) out.maxRetries = options.maxRetries;
  if (options.timeout !== undefined) out.timeout = options.timeout;
  return out;
}
