import type { ModelMessage } from '../conversation/message.js';
import { AbortedError, ConfigurationError } from '../errors.js';
import { createId } from '../ids.js';
import type {
  ModelClient,
  ModelRequest,
  ModelSettings,
  ModelStreamEvent,
  OutputSchema,
  Usage,
} from '../models/modelClient.js';
import { checkToolChoiceOption, resolveToolChoice, type ToolChoice } from '../models/toolChoice.js';

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
  /**
   * The tool choice of every call, as the OpenAI clients' and `AISDKModel`'s option (a call's
   * `settings.toolChoice` wins; see {@link ToolChoice}). Scripted replies must obey it.
   */
  toolChoice?: ToolChoice;
}

/** A request as {@link ScriptedModel} recorded it (messages copied at call time). */
export interface RecordedRequest {
  agent: string | undefined;
  messages: ModelMessage[];
  toolNames: string[];
  /** The call's sampling settings, when it had any. */
  settings?: ModelSettings;
  /** The structured-output schema the call asked for, when it had one. */
  outputSchema?: OutputSchema;
  /**
   * The tool choice the call would send to a provider (`resolveToolChoice`: the call's, else the
   * client's; none without tools or once `resetToolChoice` dropped a forcing one), when it had one.
   */
  toolChoice?: ToolChoice;
}

/**
 * A model that answers from a script: for tests and replays, never for pretending a network works.
 * It streams text in chunks, gives each tool call a unique id (`call_<uuidv7>`, unique across models and processes) unless
 * scripted, and records every request it receives in `requests`.
 *
 * It takes the tool choice as a real provider does (the call's `settings.toolChoice`, else its
 * `toolChoice` option; none once `resetToolChoice` is set, see `resolveToolChoice`), and refuses a
 * scripted reply a provider would never give under it: under `'required'` a reply without tool calls,
 * under `{ name }` one that calls no tool or another tool, under `'none'` one with tool calls. So a
 * test's script cannot pass where the real model could not answer so.
 *
 * @throws {ConfigurationError} from `stream` when a list script runs out of responses, or a scripted
 *   reply disobeys the call's tool choice (naming the reply, the choice and where it came from)
 * @throws {InvalidInputError} from `stream` when `settings.toolChoice` is malformed or forces a tool the
 *   request does not offer, as the OpenAI clients do before any HTTP call (no scripted reply is used)
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
  readonly #toolChoice: ToolChoice | undefined;
  #calls = 0;

  /** @throws {ConfigurationError} when `options.toolChoice` is not a {@link ToolChoice} */
  constructor(script: readonly ScriptedResponse[] | ScriptedResponder, options: ScriptedModelOptions = {}) {
    this.#script = script;
    this.model = options.model ?? 'scripted';
    checkToolChoiceOption(options.toolChoice, `ScriptedModel ${JSON.stringify(this.model)}`);
    this.#toolChoice = options.toolChoice;
    this.#chunkSize = Math.max(1, options.chunkSize ?? 16);
    this.#record = options.record ?? true;
  }

  /** How many scripted responses are left (`Infinity` for a responder function). */
  get remaining(): number {
    return typeof this.#script === 'function' ? Number.POSITIVE_INFINITY : this.#script.length - this.#calls;
  }

  /**
   * Streams the next scripted response (see the class comment). The response is chosen and the
   * request recorded when the stream is first read, as an async generator would; the events are
   * then read from a list, without a generator's machinery (so benchmarks measure Baton, not the model).
   */
  stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    return new ScriptedStream(() => this.#answer(request), request.signal, this.model);
  }

  /** Records `request`, takes the next response and turns it into stream events. */
  #answer(request: ModelRequest): { events: ModelStreamEvent[]; index: number } {
    // Checked as the real clients check it before any HTTP call: a refused call takes no scripted reply.
    const toolChoice = resolveToolChoice(request, this.#toolChoice, `ScriptedModel ${JSON.stringify(this.model)}`);
    const index = this.#calls;
    this.#calls += 1;
    if (this.#record) {
      const recorded: RecordedRequest = {
        agent: request.agent,
        messages: request.messages.map((m) => ({ ...m })),
        toolNames: request.tools.map((t) => t.name),
      };
      if (request.settings !== undefined) recorded.settings = { ...request.settings };
      if (request.outputSchema !== undefined) recorded.outputSchema = request.outputSchema;
      if (toolChoice !== undefined) recorded.toolChoice = toolChoice;
      this.requests.push(recorded);
    }
    const response = typeof this.#script === 'function' ? this.#script(request, index) : this.#script[index];
    if (response === undefined) {
      throw new ConfigurationError(
        `ScriptedModel ${JSON.stringify(this.model)} has no response #${index + 1} (the script has ${index}). Add one.`,
      );
    }
    if (response.error) throw response.error;
    if (toolChoice !== undefined) this.#checkObeys(response, toolChoice, request, index);
    const events: ModelStreamEvent[] = [];
    const text = response.text ?? '';
    for (let at = 0; at < text.length; at += this.#chunkSize)
      events.push({ type: 'text.delta', delta: text.slice(at, at + this.#chunkSize) });
    const calls = response.toolCalls ?? [];
    for (const call of calls) {
      const args =
        call.arguments === undefined
          ? '{}'
          : typeof call.arguments === 'string'
            ? call.arguments
            : JSON.stringify(call.arguments);
      events.push({
        type: 'tool_call',
        toolCall: { id: call.id ?? `call_${createId()}`, name: call.name, arguments: args },
      });
    }
    const inputTokens = response.usage?.inputTokens ?? 0;
    const outputTokens = response.usage?.outputTokens ?? 0;
    events.push({
      type: 'usage',
      usage: {
        inputTokens,
        outputTokens,
        totalTokens: response.usage?.totalTokens ?? inputTokens + outputTokens,
        requests: 1,
      },
    });
    events.push({ type: 'finish', finishReason: calls.length > 0 ? 'tool_calls' : 'stop' });
    return { events, index };
  }

  /** @throws {ConfigurationError} when the reply is one no provider gives under `choice` */
  #checkObeys(response: ScriptedResponse, choice: ToolChoice, request: ModelRequest, index: number): void {
    const called = (response.toolCalls ?? []).map((call) => call.name);
    let problem: string | undefined;
    if (choice === 'required' && called.length === 0) problem = 'calls no tool';
    else if (choice === 'none' && called.length > 0) problem = `calls ${called.join(', ')}`;
    else if (typeof choice === 'object' && (called.length === 0 || called.some((name) => name !== choice.name)))
      problem = called.length === 0 ? 'calls no tool' : `calls ${called.join(', ')}`;
    if (problem === undefined) return;
    const source =
      request.settings?.toolChoice !== undefined ? 'modelSettings.toolChoice' : "the ScriptedModel's toolChoice option";
    const by = request.agent === undefined ? '' : ` (agent ${JSON.stringify(request.agent)})`;
    const fix =
      choice === 'none'
        ? 'Script a text reply'
        : typeof choice === 'object'
          ? `Script a call of ${JSON.stringify(choice.name)}`
          : 'Script a tool call';
    throw new ConfigurationError(
      `ScriptedModel ${JSON.stringify(this.model)} response #${index + 1}${by} ${problem}, but the call's tool ` +
        `choice is ${JSON.stringify(choice)} (${source}): a real model could not answer so. ` +
        `${fix}, or change the choice.`,
    );
  }
}

/**
 * One {@link ScriptedModel} call's stream: answers on the first read, then gives the answer's events
 * one per read. The signal is checked before answering and after each text delta (an aborted call
 * rejects with {@link AbortedError}); a failure ends the stream.
 */
class ScriptedStream implements AsyncIterable<ModelStreamEvent>, AsyncIterator<ModelStreamEvent> {
  readonly #answer: () => { events: ModelStreamEvent[]; index: number };
  readonly #signal: AbortSignal | undefined;
  readonly #model: string;
  #events: ModelStreamEvent[] | undefined;
  #index = 0;
  #at = 0;
  #done = false;

  constructor(
    answer: () => { events: ModelStreamEvent[]; index: number },
    signal: AbortSignal | undefined,
    model: string,
  ) {
    this.#answer = answer;
    this.#signal = signal;
    this.#model = model;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<ModelStreamEvent, undefined>> {
    if (this.#done) return Promise.resolve({ done: true, value: undefined });
    try {
      let events = this.#events;
      if (events === undefined) {
        const answered = this.#answer();
        events = answered.events;
        this.#events = events;
        this.#index = answered.index;
        this.#checkAborted();
      } else if (events[this.#at - 1]?.type === 'text.delta') this.#checkAborted();
      if (this.#at >= events.length) {
        this.#done = true;
        return Promise.resolve({ done: true, value: undefined });
      }
      const value = events[this.#at]!;
      this.#at += 1;
      return Promise.resolve({ done: false, value });
    } catch (error) {
      this.#done = true;
      return Promise.reject(error);
    }
  }

  return(): Promise<IteratorResult<ModelStreamEvent, undefined>> {
    this.#done = true;
    return Promise.resolve({ done: true, value: undefined });
  }

  #checkAborted(): void {
    const signal = this.#signal;
    if (signal?.aborted)
      throw new AbortedError(`ScriptedModel ${JSON.stringify(this.#model)} call #${this.#index + 1} was cancelled.`, {
        cause: signal.reason,
      });
  }
}
