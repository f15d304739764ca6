import type { Agent } from '../agents/agent.js';
import { checkStructuredOutput, outputCorrection } from '../agents/structuredOutput.js';
import type { Tool } from '../agents/tool.js';
import { parseArguments } from '../agents/toolCall.js';
import type { BatonEvent } from '../conversation/events.js';
import { type Message, type ModelMessage, type ToolCall, toModelMessage } from '../conversation/message.js';
import { AbortedError, InvalidInputError, MaxStepsExceededError, OutputValidationError } from '../errors.js';
import {
  addUsage,
  emptyUsage,
  type FinishReason,
  type ModelRequest,
  type ModelStreamEvent,
  type ToolDefinition,
  type Usage,
} from '../models/modelClient.js';
import { NEVER_ABORTED, raceAbort } from './abort.js';
import { answerToolCalls, type ToolCallStep } from './answerToolCalls.js';
import { EventChannel, type EventSink } from './eventChannel.js';
import type { Executor, ExecutorInput, ExecutorOutcome, TurnSettings } from './executor.js';
import { modelMessagesOf } from './modelHistory.js';

/** What one activation may call (see `AgentExecutor#toolsFor`). */
interface ActivationTools {
  tools: ReadonlyMap<string, Tool>;
  definitions: ToolDefinition[];
  /** The agent's tool array they were built from, and the lengths of both arrays then. */
  own: readonly Tool[];
  ownCount: number;
  extraCount: number;
}

const NO_TOOLS: readonly Tool[] = [];

/**
 * Runs an {@link Agent}: model → tool calls (several in one response run concurrently; results are
 * committed in call order) → model … until a final answer, a handoff, a request or the end of the
 * conversation. A step interrupted by a crash resumes from the history and the journal's pending
 * writes: a finished tool call is never run again (docs/architecture.md invariant 4).
 *
 * @example
 * ```ts
 * import { AgentExecutor, agent } from '@baton/core';
 * import { ScriptedModel } from '@baton/core/testing';
 * const executor = new AgentExecutor(agent({ name: 'helper', description: 'Helps.', instructions: 'Be brief.', model: new ScriptedModel([{ text: 'Hi!' }]) }));
 * ```
 */
export class AgentExecutor implements Executor {
  /** Tools and definitions built for an array of runtime tools (see `#toolsFor`). */
  readonly #activationTools = new WeakMap<readonly Tool[], ActivationTools>();

  constructor(readonly agent: Agent) {}

  get name(): string {
    return this.agent.name;
  }

  get description(): string {
    return this.agent.description;
  }

  /**
   * Checks arguments a human edited while approving a call to one of this agent's tools, before the
   * turn goes on (see {@link Executor.validateApprovedArguments}).
   * @throws {InvalidInputError} naming the tool and each issue, or when the agent has no such tool
   */
  async validateApprovedArguments(toolName: string, args: Record<string, unknown>): Promise<void> {
    const found = this.agent.tools.find((t) => t.name === toolName);
    if (found === undefined)
      throw new InvalidInputError(
        `Agent ${JSON.stringify(this.agent.name)} has no tool ${JSON.stringify(toolName)} to run with edited arguments.`,
      );
    const checked = await parseArguments(found, args);
    if (!checked.ok)
      throw new InvalidInputError(
        `The edited arguments ${JSON.stringify(args)} fail the schema: ${checked.problem} The request is still pending; answer it again.`,
      );
  }

  /** Runs one activation as a generator (see {@link Executor.execute}): the events of {@link run}, read through an {@link EventChannel}. */
  async *execute(input: ExecutorInput): AsyncGenerator<BatonEvent, ExecutorOutcome, void> {
    let outcome: ExecutorOutcome | undefined;
    yield* new EventChannel(async (channel) => {
      outcome = await this.run({ ...input, ready: channel.ready }, channel.emit);
    });
    return outcome!;
  }

  /** Runs one activation, emitting its events into `emit` (see {@link Executor.run}). */
  async run(input: ExecutorInput, emit: EventSink): Promise<ExecutorOutcome> {
    const { tools, definitions } = this.#toolsFor(input);
    // `input.history` may be a live array the journal appends to (the handoff runtime's is): this
    // activation reads its first `given` messages and keeps its own commits apart, without copying it.
    const given = input.history.length;
    const own: Message[] = [];
    let usage: Usage = emptyUsage();
    let steps = 0;
    /** After an answer failed the agent's `outputType`: that answer and what was wrong, for the next call only (never stored). */
    let correction: ModelMessage[] | undefined;
    /** Whether this agent has made tool calls in this turn: then its calls no longer force one (`ModelRequest.resetToolChoice`). */
    let usedTools = usedToolsThisTurn(input.history, given, this.agent.name);

    for (;;) {
      if (input.signal.aborted) throw new AbortedError('The turn was cancelled.', { cause: input.signal.reason });
      const last = own.length > 0 ? own[own.length - 1] : input.history[given - 1];
      if (last?.role === 'assistant' && last.toolCalls !== undefined && last.toolCalls.length > 0) {
        const step = await answerToolCalls(this.agent.name, last.toolCalls, tools, input, emit);
        const ended = stepOutcome(step, usage);
        if (ended !== undefined) return ended;
        own.push(...step.committed);
        continue;
      }
      if (steps >= this.agent.maxSteps) {
        throw new MaxStepsExceededError(
          `Agent ${JSON.stringify(this.agent.name)} made ${steps} model calls without finishing (maxSteps ${this.agent.maxSteps}).`,
        );
      }
      steps += 1;
      const response = await this.#callModel(own, given, definitions, input, emit, correction, usedTools);
      usage = addUsage(usage, response.usage);
      if (response.toolCalls.length > 0) usedTools = true;
      let structured: { value: unknown } | undefined;
      if (response.toolCalls.length === 0 && this.agent.outputType !== undefined) {
        // Structured output: an answer that fails the schema is told to the model once, then fails the turn.
        const checked = await checkStructuredOutput(this.agent.outputType, response.text);
        if (!checked.ok && correction === undefined) {
          correction = outputCorrection(response.text, checked.issues);
          continue;
        }
        if (!checked.ok) throw new OutputValidationError(this.agent.name, response.text, checked.issues);
        structured = { value: checked.value };
      }
      correction = undefined;
      const message = await this.#commitResponse(response, input);
      own.push(message);
      if (structured !== undefined) {
        emit({
          type: 'message',
          sessionId: input.sessionId,
          branchId: input.branchId,
          message,
          structuredOutput: structured.value,
        });
        return { type: 'reply', message, usage, structuredOutput: structured.value };
      }
      emit({ type: 'message', sessionId: input.sessionId, branchId: input.branchId, message });
      if (response.toolCalls.length === 0) return { type: 'reply', message, usage };
    }
  }

  /**
   * The tools of one activation by name (the agent's own that the turn's filter lets through, then
   * the runtime's) and their definitions for the model. Without a per-turn filter they are built
   * once per array of runtime tools (the handoff runtime passes the same array to every activation
   * of an agent in a session) and reused while neither array changes length.
   */
  #toolsFor(input: ExecutorInput): ActivationTools {
    const extra = input.tools ?? NO_TOOLS;
    const own = this.agent.tools;
    if (input.turnSettings?.tools === undefined) {
      const known = this.#activationTools.get(extra);
      if (
        known !== undefined &&
        known.own === own &&
        known.ownCount === own.length &&
        known.extraCount === extra.length
      )
        return known;
    }
    const tools = new Map<string, Tool>();
    const allowed = toolFilter(input.turnSettings?.tools, this.agent.name);
    for (const t of own) if (allowed(t.name)) tools.set(t.name, t);
    for (const t of extra) tools.set(t.name, t);
    const definitions: ToolDefinition[] = [...tools.values()].map((t) => ({
      name: t.name,
      description: t.description,
      parameters: t.jsonSchema,
    }));
    const built: ActivationTools = { tools, definitions, own, ownCount: own.length, extraCount: extra.length };
    if (input.turnSettings?.tools === undefined) this.#activationTools.set(extra, built);
    return built;
  }

  /**
   * System instructions, then the history (`input.history`'s first `given` messages, converted once,
   * see {@link modelMessagesOf}, and this activation's own), with the turn's context just before the
   * newest user message (after the instructions when there is none). Context changes from turn to
   * turn; placed there, every earlier message keeps its position, so a request repeats the previous
   * turn's request as its prefix (what providers' prompt caching reuses). Then `correction` (an output correction, never stored).
   */
  #modelInput(
    own: readonly Message[],
    given: number,
    input: ExecutorInput,
    correction?: readonly ModelMessage[],
  ): readonly ModelMessage[] | Promise<readonly ModelMessage[]> {
    const instructions =
      typeof this.agent.instructions === 'string'
        ? this.agent.instructions
        : this.agent.instructions({ sessionId: input.sessionId, branchId: input.branchId, state: input.state.session });
    const base = modelMessagesOf(input.history, given);
    const history = base.length === given ? base : base.slice(0, given);
    const head: ModelMessage[] = [{ role: 'system', content: instructions }];
    const extra = input.turnSettings?.instructions;
    if (extra !== undefined && extra !== '') head.push({ role: 'system', content: extra });
    const context = input.context ?? [];
    const newestUser = context.length === 0 ? -1 : history.findLastIndex((m) => m.role === 'user');
    // concat, not push(...): a long history would overflow the argument list.
    const messages =
      newestUser < 0
        ? head.concat(context, history)
        : head.concat(history.slice(0, newestUser), context, history.slice(newestUser));
    for (const message of own) messages.push(toModelMessage(message));
    if (correction !== undefined) messages.push(...correction);
    return input.prepareModelInput ? input.prepareModelInput(messages) : messages;
  }

  /** Commits the model's response as this agent's assistant message, once the reader is ready for it. */
  async #commitResponse(response: { text: string; toolCalls: ToolCall[] }, input: ExecutorInput): Promise<Message> {
    const ready = input.ready?.();
    if (ready !== undefined) await ready;
    const [message] = await input.journal.commit([
      response.toolCalls.length > 0
        ? { role: 'assistant', agent: this.agent.name, content: response.text, toolCalls: response.toolCalls }
        : { role: 'assistant', agent: this.agent.name, content: response.text },
    ]);
    if (message === undefined) throw new Error('ExecutorJournal.commit returned no message.');
    return message;
  }

  /**
   * The request of one model call: the messages, the activation's tools, the turn's model settings, the agent's
   * output schema, and `resetToolChoice` once the agent has made tool calls in this turn (unless it opted out).
   */
  #modelRequest(
    messages: readonly ModelMessage[],
    tools: ToolDefinition[],
    input: ExecutorInput,
    usedTools: boolean,
  ): ModelRequest {
    const request: ModelRequest = { messages, tools, agent: this.agent.name, signal: input.signal };
    if (input.turnSettings?.modelSettings !== undefined) request.settings = input.turnSettings.modelSettings;
    // An agent with `resetToolChoice: false` stays forced (its tool ends the activation, or maxSteps does).
    if (usedTools && this.agent.resetToolChoice !== false) request.resetToolChoice = true;
    if (this.agent.outputSchema !== undefined) request.outputSchema = this.agent.outputSchema;
    return request;
  }

  /** Starts the model call's stream. With tracing, the call and each read of it run in the model call's span (instrumented clients nest under it). */
  #startStream(request: ModelRequest, within: ExecutorInput['within']): AsyncIterator<ModelStreamEvent> {
    const client = this.agent.model;
    return within === undefined
      ? client.stream(request)[Symbol.asyncIterator]()
      : within(() => client.stream(request)[Symbol.asyncIterator]());
  }

  async #callModel(
    own: readonly Message[],
    given: number,
    tools: ToolDefinition[],
    input: ExecutorInput,
    emit: EventSink,
    correction: readonly ModelMessage[] | undefined,
    usedTools: boolean,
  ): Promise<{ text: string; toolCalls: ToolCall[]; usage: Usage; finishReason: FinishReason }> {
    // Awaited only when `prepareModelInput` returned a promise (one tick less per model call otherwise).
    const prepared = this.#modelInput(own, given, input, correction);
    const request = this.#modelRequest(Array.isArray(prepared) ? prepared : await prepared, tools, input, usedTools);
    const { sessionId, branchId } = input;
    const agent = this.agent.name;
    const model = this.agent.model.model;
    // Built literally: a spread followed by more keys is a slow path in V8 (see handoff's turn/bufferedJournal.ts).
    emit({ type: 'model.started', sessionId, branchId, agent, model });
    const ready = input.ready?.();
    if (ready !== undefined) await ready;
    const startedAt = performance.now();
    const response = await this.#readStream(this.#startStream(request, input.within), input, emit);
    const { finishReason } = response;
    const usage = response.usage.requests === 0 ? { ...response.usage, requests: 1 } : response.usage;
    emit({
      type: 'model.completed',
      sessionId,
      branchId,
      agent,
      model,
      durationMs: performance.now() - startedAt,
      usage,
      finishReason,
    });
    return { text: response.text, toolCalls: response.toolCalls, usage, finishReason };
  }

  /** Reads the model call's stream to its end: the text (each delta emitted), the tool calls, the usage and the finish reason. */
  async #readStream(
    iterator: AsyncIterator<ModelStreamEvent>,
    input: ExecutorInput,
    emit: EventSink,
  ): Promise<{ text: string; toolCalls: ToolCall[]; usage: Usage; finishReason: FinishReason }> {
    let text = '';
    const toolCalls: ToolCall[] = [];
    let usage = emptyUsage();
    let finishReason: FinishReason = 'other';
    const { sessionId, branchId, within } = input;
    const agent = this.agent.name;
    // Raced with the signal, so a model client that ignores it cannot hold a cancelled turn.
    const abort = raceAbort(input.signal);
    const cancellable = input.signal !== NEVER_ABORTED;
    let done = false;
    try {
      for (;;) {
        const next = await abort.race(within === undefined ? iterator.next() : within(() => iterator.next()));
        if (next.done === true) {
          done = true;
          break;
        }
        const event = next.value;
        if (event.type === 'text.delta') {
          text += event.delta;
          emit({ type: 'message.delta', sessionId, branchId, agent, delta: event.delta });
          if (cancellable) {
            // A call that can be cancelled keeps in step with its reader, as a generator would: a
            // reader that aborts on a delta sees no later delta, only the AbortedError.
            const ready = input.ready?.();
            if (ready !== undefined) await ready;
          }
        } else if (event.type === 'tool_call') toolCalls.push(event.toolCall);
        else if (event.type === 'usage') usage = addUsage(usage, event.usage);
        else finishReason = event.finishReason;
      }
    } finally {
      abort.dispose();
      // Not awaited: a stream that ignores its signal may never answer `return`.
      if (!done) iterator.return?.().catch(() => undefined);
    }
    return { text, toolCalls, usage, finishReason };
  }
}

/** What a step of tool calls ends the activation with (requests, a handoff, the end of the conversation), or `undefined` to go on. */
function stepOutcome(step: ToolCallStep, usage: Usage): ExecutorOutcome | undefined {
  if (step.requests.length > 0) return { type: 'requests', requests: step.requests, usage };
  const { control } = step;
  if (control?.kind === 'handoff') {
    const target = control.target ?? '';
    return control.reason === undefined
      ? { type: 'handoff', target, usage }
      : { type: 'handoff', target, reason: control.reason, usage };
  }
  if (control?.kind === 'end_conversation')
    return { type: 'end_conversation', reason: control.reason ?? 'ended by agent', usage };
  return undefined;
}

/**
 * Whether `agent` made tool calls in this turn before this activation: an assistant message of its own
 * with tool calls after the newest user message of `history`'s first `given` (a resumed step, or the
 * agent activated again after a handoff back), so a forced tool choice cannot loop across activations.
 */
function usedToolsThisTurn(history: readonly Message[], given: number, agent: string): boolean {
  for (let i = given - 1; i >= 0; i -= 1) {
    const message = history[i]!;
    if (message.role === 'user') return false;
    if (message.role === 'assistant' && message.agent === agent && (message.toolCalls?.length ?? 0) > 0) return true;
  }
  return false;
}

/** The predicate of a {@link TurnSettings.tools} filter for `agent` (everything passes without one). */
function toolFilter(filter: TurnSettings['tools'], agent: string): (toolName: string) => boolean {
  if (filter === undefined) return () => true;
  if (typeof filter === 'function') return (name) => filter(name, agent);
  const names = new Set(filter);
  return (name) => names.has(name);
}
