import type { ModelMessage, ToolCall } from '../conversation/message.js';
import type { JsonSchema } from '../agents/tool.js';

/** Token counts of one or more model calls. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** How many model calls these counts cover. */
  requests: number;
}

/** A zero {@link Usage}. */
export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, totalTokens: 0, requests: 0 };
}

/** Adds `b` into a copy of `a`. */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    totalTokens: a.totalTokens + b.totalTokens,
    requests: a.requests + b.requests,
  };
}

/** A function the model may call. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/** One model call. `messages` already holds the system instructions first. */
export interface ModelRequest {
  messages: readonly ModelMessage[];
  tools: readonly ToolDefinition[];
  /** Whether the model may return several tool calls in one response (default true). */
  parallelToolCalls?: boolean;
  /** Sampling settings for this call only; they win over the client's own options. */
  settings?: ModelSettings;
  /** The agent making the call (for logs and scripted replies). */
  agent?: string;
  signal?: AbortSignal;
}

/**
 * Sampling settings of one model call (OpenAI's names in camelCase; each client maps them to its
 * wire format and leaves out what is not set).
 */
export interface ModelSettings {
  /** Sampling temperature, 0–2. */
  temperature?: number;
  /** Nucleus sampling, 0–1. */
  topP?: number;
  /** The most tokens the answer may have. */
  maxOutputTokens?: number;
}

/** Why the model stopped: a final answer (`stop`), tool calls, the token limit, or a content filter. */
export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';

/**
 * What a streamed model call yields: text deltas as they arrive, each complete tool call, usage,
 * and exactly one `finish` last.
 */
export type ModelStreamEvent =
  | { type: 'text.delta'; delta: string }
  | { type: 'tool_call'; toolCall: ToolCall }
  | { type: 'usage'; usage: Usage }
  | { type: 'finish'; finishReason: FinishReason };

/**
 * One streamed model call. Implementations: `OpenAIChatModel`, `OpenAIResponsesModel`
 * (`@baton/core/openai`), `ScriptedModel` (`@baton/core/testing`).
 * Errors are Baton errors: `RateLimitError`, `AuthenticationError`, `BadRequestError`, `TimeoutError`, `ModelProviderError`.
 */
export interface ModelClient {
  /** The model's name, e.g. `'gpt-4.1-mini'`. */
  readonly model: string;
  /**
   * Makes one model call and streams its answer: `text.delta`s as they arrive, each complete
   * `tool_call`, `usage`, and exactly one `finish` last.
   * @param request the messages (system instructions first), the tools, and an optional `signal`
   * @throws {RateLimitError | AuthenticationError | BadRequestError | TimeoutError | ModelProviderError} when the provider fails
   * @throws {AbortedError} when `request.signal` is aborted
   */
  stream(request: ModelRequest): AsyncIterable<ModelStreamEvent>;
}

/** A whole model response, collected from its stream. */
export interface ModelResponse {
  text: string;
  toolCalls: ToolCall[];
  usage: Usage;
  finishReason: FinishReason;
}

/**
 * Reads a model stream to its end.
 *
 * @param onDelta called with each text delta as it arrives
 * @returns the text, tool calls in the order the model gave them, usage and finish reason
 */
export async function collectModelResponse(
  stream: AsyncIterable<ModelStreamEvent>,
  onDelta?: (delta: string) => void,
): Promise<ModelResponse> {
  let text = '';
  const toolCalls: ToolCall[] = [];
  let usage = emptyUsage();
  let finishReason: FinishReason = 'other';
  for await (const event of stream) {
    switch (event.type) {
      case 'text.delta':
        text += event.delta;
        onDelta?.(event.delta);
        break;
      case 'tool_call':
        toolCalls.push(event.toolCall);
        break;
      case 'usage':
        usage = addUsage(usage, event.usage);
        break;
      case 'finish':
        finishReason = event.finishReason;
        break;
    }
  }
  if (usage.requests === 0) usage = { ...usage, requests: 1 };
  return { text, toolCalls, usage, finishReason };
}
