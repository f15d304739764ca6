import {
  AbortedError,
  checkToolChoiceOption,
  type FinishReason,
  type ModelClient,
  ModelProviderError,
  type ModelRequest,
  type ModelStreamEvent,
  resolveToolChoice,
  type ToolCall,
  type ToolChoice,
  type Usage,
} from '@baton/core';
import {
  type FinishReason as AiFinishReason,
  jsonSchema,
  type LanguageModel,
  type LanguageModelUsage,
  Output,
  type SystemModelMessage,
  streamText,
  type ToolSet,
  tool,
} from 'ai';
import { toAiSdkMessages } from './toAiSdkMessages.js';
import { toBatonError } from './toBatonError.js';

/** Options of {@link AISDKModel}. */
export interface AISDKModelOptions {
  /** Retries of a failed call, made by the AI SDK (429, 5xx, network) with backoff; AI SDK default 2. */
  maxRetries?: number;
  /** Sampling temperature; omitted when not set. Per-call `settings.temperature` wins. */
  temperature?: number;
  /** Upper bound of generated tokens per call. Per-call `settings.maxOutputTokens` wins. */
  maxOutputTokens?: number;
  /**
   * The default tool choice (`'auto'`, `'required'`, `'none'` or `{ name }`), sent as the AI SDK's
   * `toolChoice` (`{ name }` as `{ type: 'tool', toolName }`). Per-call `settings.toolChoice` wins; sent only
   * when the request has tools; a forcing choice is dropped after the agent's tool calls in a turn.
   */
  toolChoice?: ToolChoice;
  /** Provider-specific options, passed as they are (e.g. `{ anthropic: { thinking: { type: 'enabled', budgetTokens: 2000 } } }`). */
  providerOptions?: Parameters<typeof streamText>[0]['providerOptions'];
  /** Extra HTTP headers for each call. */
  headers?: Record<string, string>;
}

/**
 * A {@link ModelClient} over any Vercel AI SDK `LanguageModel` (`ai` v6: Anthropic, Google Gemini,
 * Amazon Bedrock, Mistral, Ollama through its community provider, …), through the AI SDK's
 * `streamText` (https://ai-sdk.dev/docs/reference/ai-sdk-core/stream-text). Baton's tools are given
 * to the AI SDK without `execute`, so the model's tool calls come back to Baton's agent loop (which
 * validates, approves and runs them); one model call is one AI SDK step.
 *
 * - Messages: see {@link toAiSdkMessages} (`context` becomes a system message marked as recalled memory).
 * - Streaming: text deltas as they arrive; each tool call whole, with its arguments as JSON text;
 *   several tool calls in one response when the model makes them (parallel tool calls); usage; one `finish`.
 * - Tool choice: `settings.toolChoice`, else the `toolChoice` option, as the AI SDK's `toolChoice`.
 * - Structured output: `request.outputSchema` is sent as the AI SDK's JSON response format
 *   (`Output.object`); Baton's agent loop validates the answer.
 * - Errors (after the AI SDK's own retries): see {@link toBatonError} — `RateLimitError`,
 *   `AuthenticationError`, `BadRequestError`, `TimeoutError`, `ModelProviderError`, `AbortedError`.
 *
 * @throws {ConfigurationError} from the constructor when `options.toolChoice` is not a `ToolChoice`
 *
 * @example
 * ```ts
 * import { agent } from '@baton/core';
 * import { AISDKModel } from '@baton/ai-sdk';
 * import { anthropic } from '@ai-sdk/anthropic';
 * const billing = agent({
 *   name: 'billing', description: 'Refunds.', instructions: 'You resolve billing problems.',
 *   model: new AISDKModel(anthropic('claude-sonnet-4-5'), { maxRetries: 3 }),
 * });
 * ```
 */
export class AISDKModel implements ModelClient {
  /** The model id (`languageModel.modelId`, or the string given). */
  readonly model: string;
  /** The AI SDK language model in use. */
  readonly languageModel: LanguageModel;
  readonly #options: AISDKModelOptions;

  constructor(languageModel: LanguageModel, options: AISDKModelOptions = {}) {
    this.languageModel = languageModel;
    this.model = typeof languageModel === 'string' ? languageModel : languageModel.modelId;
    checkToolChoiceOption(options.toolChoice, `AISDKModel ${JSON.stringify(this.model)}`);
    this.#options = options;
  }

  /**
   * Makes one streamed model call.
   *
   * @returns text deltas in order, each tool call, usage, and one `finish`
   * @throws the Baton errors listed on the class
   */
  async *stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    const where = `AI SDK call to model ${JSON.stringify(this.model)}`;
    let finish: { finishReason: FinishReason; usage: Usage } | undefined;
    const calls: ToolCall[] = [];
    try {
      const result = streamText(this.#params(request, where));
      for await (const part of result.fullStream) {
        switch (part.type) {
          case 'text-delta':
            if (part.text !== '') yield { type: 'text.delta', delta: part.text };
            break;
          case 'tool-call':
            // An invalid call (unknown tool, input that is not JSON) keeps the model's raw text, so the agent loop answers it with an error result.
            calls.push({
              id: part.toolCallId,
              name: part.toolName,
              arguments: typeof part.input === 'string' ? part.input : JSON.stringify(part.input ?? {}),
            });
            break;
          case 'finish':
            finish = { finishReason: finishReasonOf(part.finishReason), usage: usageOf(part.totalUsage) };
            break;
          case 'error':
            throw part.error;
          case 'abort':
            throw new AbortedError(`${where} was cancelled.`, { cause: request.signal?.reason });
          default:
            break;
        }
      }
    } catch (error) {
      throw toBatonError(error, where, request.signal);
    }
    if (request.signal?.aborted) throw new AbortedError(`${where} was cancelled.`, { cause: request.signal.reason });
    if (finish === undefined)
      throw new ModelProviderError(`${where} ended its stream without a finish; the answer is incomplete. Try again.`);
    for (const toolCall of calls) yield { type: 'tool_call', toolCall };
    yield { type: 'usage', usage: finish.usage };
    yield { type: 'finish', finishReason: calls.length > 0 ? 'tool_calls' : finish.finishReason };
  }

  #params(request: ModelRequest, where: string): Parameters<typeof streamText>[0] {
    const options = this.#options;
    // The leading system messages (instructions, recalled context) go in `system`, as the AI SDK
    // asks; a later one (rare: Baton's history holds none) stays in place, allowed explicitly.
    const messages = toAiSdkMessages(request.messages);
    let lead = 0;
    while (messages[lead]?.role === 'system') lead += 1;
    const params: Parameters<typeof streamText>[0] = {
      model: this.languageModel,
      messages: messages.slice(lead),
      allowSystemInMessages: true,
      // Errors are thrown to the caller as Baton errors; the AI SDK's default logs them to the console.
      onError: () => undefined,
    };
    if (lead > 0) params.system = messages.slice(0, lead) as SystemModelMessage[];
    if (request.tools.length > 0) {
      const tools: ToolSet = {};
      for (const definition of request.tools)
        tools[definition.name] = tool({
          description: definition.description,
          inputSchema: jsonSchema(definition.parameters),
        });
      params.tools = tools;
    }
    const toolChoice = resolveToolChoice(request, options.toolChoice, where);
    if (toolChoice !== undefined)
      params.toolChoice = typeof toolChoice === 'string' ? toolChoice : { type: 'tool', toolName: toolChoice.name };
    if (request.outputSchema !== undefined) {
      params.output = Output.object({
        schema: jsonSchema(request.outputSchema.schema),
        name: request.outputSchema.name,
      });
    }
    if (request.signal !== undefined) params.abortSignal = request.signal;
    if (options.maxRetries !== undefined) params.maxRetries = options.maxRetries;
    if (options.providerOptions !== undefined) params.providerOptions = options.providerOptions;
    if (options.headers !== undefined) params.headers = options.headers;
    const settings = request.settings;
    const temperature = settings?.temperature ?? options.temperature;
    const maxOutputTokens = settings?.maxOutputTokens ?? options.maxOutputTokens;
    if (temperature !== undefined) params.temperature = temperature;
    if (settings?.topP !== undefined) params.topP = settings.topP;
    if (maxOutputTokens !== undefined) params.maxOutputTokens = maxOutputTokens;
    return params;
  }
}

/**
 * Wraps an AI SDK language model as a Baton model client: `aisdk(model)` is `new AISDKModel(model)`
 * (the name OpenAI's Agents SDK uses for the same adapter).
 *
 * @example
 * ```ts
 * import { aisdk } from '@baton/ai-sdk';
 * import { anthropic } from '@ai-sdk/anthropic';
 * const model = aisdk(anthropic('claude-sonnet-4-5'));
 * ```
 */
export function aisdk(languageModel: LanguageModel, options: AISDKModelOptions = {}): AISDKModel {
  return new AISDKModel(languageModel, options);
}

function usageOf(usage: LanguageModelUsage | undefined): Usage {
  const inputTokens = usage?.inputTokens ?? 0;
  const outputTokens = usage?.outputTokens ?? 0;
  return { inputTokens, outputTokens, totalTokens: usage?.totalTokens ?? inputTokens + outputTokens, requests: 1 };
}

function finishReasonOf(reason: AiFinishReason): FinishReason {
  switch (reason) {
    case 'stop':
      return 'stop';
    case 'length':
      return 'length';
    case 'content-filter':
      return 'content_filter';
    case 'tool-calls':
      return 'tool_calls';
    default:
      return 'other';
  }
}
