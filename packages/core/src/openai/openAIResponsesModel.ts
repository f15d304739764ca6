import type OpenAI from 'openai';
import type {
  Response,
  ResponseCreateParamsStreaming,
  ResponseStreamEvent,
} from 'openai/resources/responses/responses';
import type { ToolCall } from '../conversation/message.js';
import { AbortedError, ModelProviderError } from '../errors.js';
import type { FinishReason, ModelClient, ModelRequest, ModelStreamEvent, Usage } from '../models/modelClient.js';
import { checkToolChoiceOption, resolveToolChoice } from '../models/toolChoice.js';
import { createOpenAIClient, type OpenAIModelOptions, requestOptions } from './openAIModelOptions.js';
import { toResponsesInput, toResponsesTools } from './responsesInput.js';
import { toBatonError } from './toBatonError.js';

/** Options of {@link OpenAIResponsesModel}: the shared {@link OpenAIModelOptions} plus `store`. */
export interface OpenAIResponsesModelOptions extends OpenAIModelOptions {
  /** Whether OpenAI keeps the response for later retrieval (the API's `store`; omitted when unset, API default true). */
  store?: boolean;
}

/**
 * A {@link ModelClient} on OpenAI's Responses API, streamed over server-sent events. Wire format:
 * https://platform.openai.com/docs/api-reference/responses/create and
 * https://platform.openai.com/docs/api-reference/responses-streaming. Text comes from
 * `response.output_text.delta`, each tool call from `response.output_item.done` (arguments joined
 * from `response.function_call_arguments.*`), usage and the finish from `response.completed` /
 * `response.incomplete`. Baton keeps the whole history itself, so every call sends the full input
 * (no `previous_response_id`).
 *
 * Errors (after the SDK's own retries): `RateLimitError` (429), `AuthenticationError` (401/403),
 * `BadRequestError` (400/404/422), `TimeoutError`, `AbortedError` (the request's signal),
 * `ModelProviderError` (anything else, including `response.failed` and `error` stream events).
 *
 * @throws {ConfigurationError} from the constructor when no API key is given and `OPENAI_API_KEY` is unset
 * @example
 * ```ts
 * import { agent } from '@baton/core';
 * import { OpenAIResponsesModel } from '@baton/core/openai';
 * const model = new OpenAIResponsesModel({ model: 'gpt-4.1-mini', store: false });
 * const helper = agent({ name: 'helper', description: 'Helps.', instructions: 'Be brief.', model });
 * ```
 */
export class OpenAIResponsesModel implements ModelClient {
  /** The model name sent with every call. */
  readonly model: string;
  /** The `openai` SDK client in use (the one passed as `client`, or one built from the options). */
  readonly client: OpenAI;
  readonly #options: OpenAIResponsesModelOptions;

  constructor(options: OpenAIResponsesModelOptions) {
    this.model = options.model;
    checkToolChoiceOption(options.toolChoice, `OpenAIResponsesModel ${JSON.stringify(options.model)}`);
    this.#options = options;
    this.client = createOpenAIClient(options);
  }

  /**
   * Makes one streamed response.
   *
   * @returns text deltas in order, each function call as it completes, usage, and one `finish`
   * @throws the Baton errors listed on the class
   */
  async *stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    const where = `OpenAI response for model ${JSON.stringify(this.model)}`;
    const argumentsByItem = new Map<string, string>();
    let toolCalls = 0;
    let end: { usage: Usage | undefined; finishReason: FinishReason } | undefined;
    try {
      const stream = await this.client.responses.create(
        this.#params(request, where),
        requestOptions(this.#options, request.signal),
      );
      for await (const event of stream as AsyncIterable<ResponseStreamEvent>) {
        switch (event.type) {
          case 'response.output_text.delta':
          case 'response.refusal.delta': // a refusal is the model's answer too; show it rather than an empty reply
            if (event.delta !== '') yield { type: 'text.delta', delta: event.delta };
            break;
          case 'response.function_call_arguments.delta':
            argumentsByItem.set(event.item_id, (argumentsByItem.get(event.item_id) ?? '') + event.delta);
            break;
          case 'response.function_call_arguments.done':
            argumentsByItem.set(event.item_id, event.arguments);
            break;
          case 'response.output_item.done':
            if (event.item.type === 'function_call') {
              const item = event.item;
              const args = item.arguments !== '' ? item.arguments : (argumentsByItem.get(item.id ?? '') ?? '');
              const toolCall: ToolCall = { id: item.call_id, name: item.name, arguments: args };
              toolCalls += 1;
              yield { type: 'tool_call', toolCall };
            }
            break;
          case 'response.completed':
          case 'response.incomplete':
            end = {
              usage: responsesUsage(event.response),
              finishReason: responsesFinishReason(event.response, toolCalls),
            };
            break;
          case 'response.failed': {
            const failure = event.response.error;
            throw new ModelProviderError(
              `${where} failed${failure ? ` (${failure.code}): ${failure.message}` : ' without an error message.'} Try again.`,
            );
          }
          case 'error':
            throw new ModelProviderError(
              `${where} failed in the stream${event.code ? ` (${event.code})` : ''}: ${event.message}`,
            );
          default:
            break;
        }
      }
    } catch (error) {
      throw toBatonError(error, where, request.signal);
    }
    // The SDK ends a stream quietly when its signal aborts; a cut-off answer must not pass as whole.
    if (request.signal?.aborted) throw new AbortedError(`${where} was cancelled.`, { cause: request.signal.reason });
    if (end === undefined) {
      throw new ModelProviderError(
        `${where} ended its stream before response.completed; the answer is incomplete. Try again.`,
      );
    }
    if (end.usage !== undefined) yield { type: 'usage', usage: end.usage };
    yield { type: 'finish', finishReason: end.finishReason };
  }

  #params(request: ModelRequest, where: string): ResponseCreateParamsStreaming {
    const options = this.#options;
    const { instructions, input } = toResponsesInput(request.messages);
    const params: ResponseCreateParamsStreaming = { ...options.extraBody, model: this.model, input, stream: true };
    if (instructions !== undefined) params.instructions = instructions;
    if (request.tools.length > 0) {
      params.tools = toResponsesTools(request.tools);
      params.parallel_tool_calls = request.parallelToolCalls ?? options.parallelToolCalls ?? true;
    }
    const toolChoice = resolveToolChoice(request, options.toolChoice, where);
    if (toolChoice !== undefined)
      params.tool_choice = typeof toolChoice === 'string' ? toolChoice : { type: 'function', name: toolChoice.name };
    const settings = request.settings;
    const temperature = settings?.temperature ?? options.temperature;
    const maxOutputTokens = settings?.maxOutputTokens ?? options.maxOutputTokens;
    if (temperature !== undefined) params.temperature = temperature;
    if (settings?.topP !== undefined) params.top_p = settings.topP;
    if (maxOutputTokens !== undefined) params.max_output_tokens = maxOutputTokens;
    if (options.store !== undefined) params.store = options.store;
    // Structured output as `text.format` (not `strict`: zod schemas need not meet its rules; the agent loop validates).
    if (request.outputSchema !== undefined) {
      params.text = {
        format: {
          type: 'json_schema',
          name: request.outputSchema.name,
          schema: request.outputSchema.schema,
          strict: false,
        },
      };
    }
    return params;
  }
}

function responsesUsage(response: Response): Usage | undefined {
  if (!response.usage) return undefined;
  return {
    inputTokens: response.usage.input_tokens,
    outputTokens: response.usage.output_tokens,
    totalTokens: response.usage.total_tokens,
    requests: 1,
  };
}

function responsesFinishReason(response: Response, toolCalls: number): FinishReason {
  if (response.status === 'incomplete') {
    const reason = response.incomplete_details?.reason;
    return reason === 'max_output_tokens' ? 'length' : reason === 'content_filter' ? 'content_filter' : 'other';
  }
  return toolCalls > 0 ? 'tool_calls' : 'stop';
}
