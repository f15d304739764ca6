import type { JsonSchema } from '../agents/tool.js';
import type { ModelMessage, ToolCall } from '../conversation/message.js';
import type { ToolChoice } from './toolChoice.js';

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

/**
 * The JSON Schema a final answer must satisfy (structured output): sent as OpenAI's `response_format`
 * `json_schema` (Chat Completions) or `text.format` (Responses), and as the AI SDK's JSON response format.
 */
export interface OutputSchema {
  /** 1–64 characters of `a-z A-Z 0-9 _ -` (OpenAI's rule for the format's name). */
  name: string;
  /** JSON Schema (draft 7) of the answer. */
  schema: JsonSchema;
}

/** One model call. `messages` already holds the system instructions first. */
export interface ModelRequest {
  messages: readonly ModelMessage[];
  tools: readonly ToolDefinition[];
  /** Whether the model may return several tool calls in one response (default true). */
  parallelToolCalls?: boolean;
  /** Sampling settings for this call only; they win over the client's own options. */
  settings?: ModelSettings;
  /** When set, a final answer (one without tool calls) must be JSON satisfying this schema. */
  outputSchema?: OutputSchema;
  /**
   * Set by the agent loop once the calling agent has made tool calls in this turn: a forcing tool
   * choice (`'required'` or a named tool, from `settings` or the client's default) is then not sent,
   * so the model can answer instead of calling tools forever. The OpenAI Agents SDK's
   * `resetToolChoice` (default true) does the same; an agent with `resetToolChoice: false` never sets it.
   */
  resetToolChoice?: boolean;
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
  /**
   * Whether and which tool the model must call (see {@link ToolChoice}); sent as Chat Completions'
   * and Responses' `tool_choice`, the AI SDK's `toolChoice`. Left out when the request has no tools.
   * After the agent's tool calls in a turn, its later calls no longer force one (see `ModelRequest.resetToolChoice`).
   */
  toolChoice?: ToolChoice;
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
   * @throws {InvalidInputError} when `settings.toolChoice` forces a tool the request does not offer (before any call)
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
