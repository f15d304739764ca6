import type OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { AbortedError, ModelBehaviorError, ModelProviderError } from '../errors.js';
import { createId } from '../ids.js';
import type { FinishReason, ModelClient, ModelRequest, ModelStreamEvent, Usage } from '../models/modelClient.js';
import { checkToolChoiceOption, resolveToolChoice } from '../models/toolChoice.js';
import { toChatMessages, toChatTools } from './chatMessages.js';
import { createOpenAIClient, type OpenAIModelOptions, requestOptions } from './openAIModelOptions.js';
import { toBatonError } from './toBatonError.js';

/** A tool call as its streamed fragments arrive, keyed by the chunk's `index`. */
interface PartialToolCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * A {@link ModelClient} on OpenAI's Chat Completions API, streamed over server-sent events, for
 * OpenAI or any OpenAI-compatible server (`baseURL`). Wire format:
 * https://platform.openai.com/docs/api-reference/chat/create and
 * https://platform.openai.com/docs/api-reference/chat-streaming. Tool-call argument fragments are
 * joined by their `index`; each tool call is yielded whole, with the model's raw JSON text.
 *
 * Errors (after the SDK's own retries): `RateLimitError` (429), `AuthenticationError` (401/403),
 * `BadRequestError` (400/404/422), `TimeoutError`, `AbortedError` (the request's signal),
 * `ModelProviderError` (anything else, with `status` and `requestId`).
 *
 * @throws {ConfigurationError} from the constructor when no API key is given and `OPENAI_API_KEY` is unset
 * @example
 * ```ts
 * import { agent } from '@baton/core';
 * import { OpenAIChatModel } from '@baton/core/openai';
 * const model = new OpenAIChatModel({ model: 'gpt-4.1-mini', maxRetries: 3, timeout: 60_000 });
 * const helper = agent({ name: 'helper', description: 'Helps.', instructions: 'Be brief.', model });
 * ```
 */
export class OpenAIChatModel implements ModelClient {
  /** The model name sent with every call. */
  readonly model: string;
  /** The `openai` SDK client in use (the one passed as `client`, or one built from the options). */
  readonly client: OpenAI;
  readonly #options: OpenAIModelOptions;

  constructor(options: OpenAIModelOptions) {
    this.model = options.model;
    checkToolChoiceOption(options.toolChoice, `OpenAIChatModel ${JSON.stringify(options.model)}`);
    this.#options = options;
    this.client = createOpenAIClient(options);
  }

  /**
   * Makes one streamed chat completion.
   *
   * @returns text deltas in order, then each tool call (in index order), usage, and one `finish`
   * @throws the Baton errors listed on the class
   */
  async *stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    const where = `OpenAI chat completion for model ${JSON.stringify(this.model)}`;
    const calls = new Map<number, PartialToolCall>();
    let usage: Usage | undefined;
    let finishReason: FinishReason | undefined;
    try {
      const stream = await this.client.chat.completions.create(
        this.#params(request, where),
        requestOptions(this.#options, request.signal),
      );
      for await (const chunk of stream) {
        if (chunk.usage) usage = chatUsage(chunk.usage);
        for (const choice of chunk.choices) {
          if (choice.index !== 0) continue;
          // Some OpenAI-compatible servers leave `delta` out of the final chunk.
          const delta: Partial<ChatCompletionChunk.Choice.Delta> = choice.delta ?? {};
          if (typeof delta.content === 'string' && delta.content !== '')
            yield { type: 'text.delta', delta: delta.content };
          // A refusal is the model's answer too; show it rather than an empty reply.
          if (typeof delta.refusal === 'string' && delta.refusal !== '')
            yield { type: 'text.delta', delta: delta.refusal };
          for (const fragment of delta.tool_calls ?? []) addFragment(calls, fragment);
          if (choice.finish_reason) finishReason = chatFinishReason(choice.finish_reason);
        }
      }
    } catch (error) {
      throw toBatonError(error, where, request.signal);
    }
    // The SDK ends a stream quietly when its signal aborts; a cut-off answer must not pass as whole.
    if (request.signal?.aborted) throw new AbortedError(`${where} was cancelled.`, { cause: request.signal.reason });
    if (finishReason === undefined) {
      throw new ModelProviderError(
        `${where} ended its stream without a finish_reason; the answer is incomplete. Try again.`,
      );
    }
    for (const index of [...calls.keys()].sort((a, b) => a - b)) {
      const call = calls.get(index)!;
      if (call.name === '') {
        throw new ModelBehaviorError(
          `${where} streamed tool call #${index} (id ${JSON.stringify(call.id)}) without a function name.`,
        );
      }
      yield { type: 'tool_call', toolCall: { id: call.id, name: call.name, arguments: call.arguments } };
    }
    if (usage !== undefined) yield { type: 'usage', usage };
    yield { type: 'finish', finishReason };
  }

  #params(request: ModelRequest, where: string): ChatCompletionCreateParamsStreaming {
    const options = this.#options;
    const params: ChatCompletionCreateParamsStreaming = {
      ...options.extraBody,
      model: this.model,
      messages: toChatMessages(request.messages),
      stream: true,
      stream_options: { include_usage: true },
    };
    if (request.tools.length > 0) {
      params.tools = toChatTools(request.tools);
      params.parallel_tool_calls = request.parallelToolCalls ?? options.parallelToolCalls ?? true;
    }
    const toolChoice = resolveToolChoice(request, options.toolChoice, where);
    if (toolChoice !== undefined)
      params.tool_choice =
        typeof toolChoice === 'string' ? toolChoice : { type: 'function', function: { name: toolChoice.name } };
    const settings = request.settings;
    const temperature = settings?.temperature ?? options.temperature;
    const maxOutputTokens = settings?.maxOutputTokens ?? options.maxOutputTokens;
    if (temperature !== undefined) params.temperature = temperature;
    if (settings?.topP !== undefined) params.top_p = settings.topP;
    if (maxOutputTokens !== undefined) params.max_completion_tokens = maxOutputTokens;
    // Structured output (https://platform.openai.com/docs/guides/structured-outputs): not `strict`, since
    // schemas made from zod need not meet strict mode's rules; the agent loop validates the answer.
    if (request.outputSchema !== undefined) {
      params.response_format = {
        type: 'json_schema',
        json_schema: { name: request.outputSchema.name, schema: request.outputSchema.schema, strict: false },
      };
    }
    return params;
  }
}

type ToolCallFragment = NonNullable<ChatCompletionChunk.Choice.Delta['tool_calls']>[number];

/** Joins one streamed tool-call fragment into the call at its `index`. */
function addFragment(calls: Map<number, PartialToolCall>, fragment: ToolCallFragment): void {
  let call = calls.get(fragment.index);
  if (call === undefined) {
    // Some OpenAI-compatible servers leave out the id; a fresh one keeps ids unique in the history.
    call = { id: fragment.id ?? `call_${createId()}`, name: '', arguments: '' };
    calls.set(fragment.index, call);
  }
  if (fragment.id) call.id = fragment.id;
  if (fragment.function?.name && call.name === '') call.name = fragment.function.name;
  if (fragment.function?.arguments) call.arguments += fragment.function.arguments;
}

function chatUsage(usage: NonNullable<ChatCompletionChunk['usage']>): Usage {
  return {
    inputTokens: usage.prompt_tokens,
    outputTokens: usage.completion_tokens,
    totalTokens: usage.total_tokens,
    requests: 1,
  };
}

function chatFinishReason(reason: ChatCompletionChunk.Choice['finish_reason']): FinishReason {
  switch (reason) {
    case 'stop':
      return 'stop';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'other';
  }
}
