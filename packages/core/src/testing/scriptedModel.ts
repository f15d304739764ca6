import { AbortedError, ConfigurationError } from '../errors.js';
import { createId } from '../ids.js';
import type { ModelMessage } from '../conversation/message.js';
import type { ModelClient, ModelRequest, ModelSettings, ModelStreamEvent, Usage } from '../models/modelClient.js';

/** One scripted model response: text, tool calls, or an error to throw. */
export interface ScriptedResponse {
  text?: string;
  /** `arguments` may be an object (sent as JSON) or raw text (to script malformed JSON). */
  toolCalls?: Array<{ id?: string; name: string; arguments?: string | Record<string, unknown> }>;
  usage?: Partial<Usage>;
  /** Thrown instead of answering (to script provider failures). */
  error?: Error;
}

/** Chooses a response from the request: for replies that depend on what the agent was sent. */
export type ScriptedResponder = (request: ModelRequest, index: number) => ScriptedResponse;

/** Options of {@link ScriptedModel}. */
export interface ScriptedModelOptions {
  /** The model name it reports (default `'scripted'`). */
  model?: string;
  /** Characters per streamed text delta (default 16). */
  chunkSize?: number;
  /** Whether to copy every request into `requests` (default true); turn it off for benchmarks over long histories. */
  record?: boolean;
}

/** A request as {@link ScriptedModel} recorded it (messages copied at call time). */
export interface RecordedRequest {
  agent: string | undefined;
  messages: ModelMessage[];
  toolNames: string[];
  /** The call's sampling settings, when it had any. */
  settings?: ModelSettings;
}

/**
 * A model that answers from a script: for tests and replays, never for pretending a network works.
 * It streams text in chunks, gives each tool call a unique id (`call_<uuidv7>`, unique across models and processes) unless
 * scripted, and records every request it receives in `requests`.
 *
 * @throws {ConfigurationError} from `stream` when a list script runs out of responses
 * @throws {AbortedError} from `stream` when the request's signal is aborted (checked before answering and after each text delta), like the OpenAI clients
 * @example
 * ```ts
 * import { ScriptedModel } from '@baton/core/testing';
 * const model = new ScriptedModel([
 *   { toolCalls: [{ name: 'look_up_order', arguments: { orderId: '1234' } }] },
 *   { text: 'Your order has shipped.' },
 * ]);
 * ```
 */
export class ScriptedModel implements ModelClient {
  readonly model: string;
  readonly requests: RecordedRequest[] = [];
  readonly #script: readonly ScriptedResponse[] | ScriptedResponder;
  readonly #chunkSize: number;
  readonly #record: boolean;
  #calls = 0;

  constructor(script: readonly ScriptedResponse[] | ScriptedResponder, options: ScriptedModelOptions = {}) {
    this.#script = script;
    this.model = options.model ?? 'scripted';
    this.#chunkSize = Math.max(1, options.chunkSize ?? 16);
    this.#record = options.record ?? true;
  }

  /** How many scripted responses are left (`Infinity` for a responder function). */
  get remaining(): number {
    return typeof this.#script === 'function' ? Number.POSITIVE_INFINITY : this.#script.length - this.#calls;
  }

  async *stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    const index = this.#calls;
    this.#calls += 1;
    if (this.#record) {
      const recorded: RecordedRequest = {
        agent: request.agent,
        messages: request.messages.map((m) => ({ ...m })),
        toolNames: request.tools.map((t) => t.name),
      };
      if (request.settings !== undefined) recorded.settings = { ...request.settings };
      this.requests.push(recorded);
    }
    const response = typeof this.#script === 'function' ? this.#script(request, index) : this.#script[index];
    if (response === undefined) {
      throw new ConfigurationError(`ScriptedModel ${JSON.stringify(this.model)} has no response #${index + 1} (the script has ${index}). Add one.`);
    }
    if (response.error) throw response.error;
    const checkAborted = () => {
      if (request.signal?.aborted) throw new AbortedError(`ScriptedModel ${JSON.stringify(this.model)} call #${index + 1} was cancelled.`, { cause: request.signal.reason });
    };
    checkAborted();
    const text = response.text ?? '';
    for (let at = 0; at < text.length; at += this.#chunkSize) {
      yield { type: 'text.delta', delta: text.slice(at, at + this.#chunkSize) };
      checkAborted();
    }
    const calls = response.toolCalls ?? [];
    for (const call of calls) {
      const args = call.arguments === undefined ? '{}' : typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
      yield { type: 'tool_call', toolCall: { id: call.id ?? `call_${createId()}`, name: call.name, arguments: args } };
    }
    const inputTokens = response.usage?.inputTokens ?? 0;
    const outputTokens = response.usage?.outputTokens ?? 0;
    yield {
      type: 'usage',
      usage: { inputTokens, outputTokens, totalTokens: response.usage?.totalTokens ?? inputTokens + outputTokens, requests: 1 },
    };
    yield { type: 'finish', finishReason: calls.length > 0 ? 'tool_calls' : 'stop' };
  }
}
