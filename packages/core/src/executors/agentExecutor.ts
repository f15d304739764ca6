import { raceAbort } from './abort.js';
import type { Agent } from '../agents/agent.js';
import type { PendingWrite } from '../conversation/checkpoint.js';
import { AbortedError, MaxStepsExceededError } from '../errors.js';
import type { BatonEvent } from '../conversation/events.js';
import type { Executor, ExecutorInput, ExecutorOutcome, TurnSettings } from './executor.js';
import { type Message, type ModelMessage, type ToolCall, toModelMessage } from '../conversation/message.js';
import { addUsage, emptyUsage, type FinishReason, type ModelRequest, type ToolDefinition, type Usage } from '../models/modelClient.js';
import { type NewRequest, requestKey } from '../conversation/request.js';
import { runToolCall } from '../agents/toolCall.js';
import type { Tool } from '../agents/tool.js';

/** The model view of a history array, converted so far: `models[i]` is `toModelMessage(history[i])` for `i < models.length`. */
interface ConvertedHistory {
  models: ModelMessage[];
  /** `history[models.length - 1]` when it was converted, to notice an array that was changed rather than appended to. */
  last: Message | undefined;
}

/**
 * Model views of history arrays, extended as they grow. A runtime that passes the same growing
 * array to every activation (as the handoff runtime does) gets each message converted once over a
 * conversation instead of once per model call; any other array is converted on first use.
 */
const convertedHistories = new WeakMap<readonly Message[], ConvertedHistory>();

/** The model view of `history[0..length)`, reusing and extending earlier conversions of the same array. */
function modelMessagesOf(history: readonly Message[], length: number): readonly ModelMessage[] {
  let entry = convertedHistories.get(history);
  const known = entry?.models.length ?? 0;
  if (entry === undefined || known > history.length || (known > 0 && history[known - 1] !== entry.last)) {
    entry = { models: [], last: undefined };
    convertedHistories.set(history, entry);
  }
  for (let i = entry.models.length; i < length; i += 1) entry.models.push(toModelMessage(history[i]!));
  entry.last = history[entry.models.length - 1];
  return entry.models;
}

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
  constructor(readonly agent: Agent) {}

  get name(): string {
    return this.agent.name;
  }

  get description(): string {
    return this.agent.description;
  }

  async *execute(input: ExecutorInput): AsyncGenerator<BatonEvent, ExecutorOutcome, void> {
    const tools = new Map<string, Tool>();
    const allowed = toolFilter(input.turnSettings?.tools, this.agent.name);
    for (const t of this.agent.tools) if (allowed(t.name)) tools.set(t.name, t);
    for (const t of input.tools ?? []) tools.set(t.name, t);
    const definitions: ToolDefinition[] = [...tools.values()].map((t) => ({ name: t.name, description: t.description, parameters: t.jsonSchema }));
    // `input.history` may be a live array the journal appends to (the handoff runtime's is): this
    // activation reads its first `given` messages and keeps its own commits apart, without copying it.
    const given = input.history.length;
    const own: Message[] = [];
    let usage: Usage = emptyUsage();
    let steps = 0;

    for (;;) {
      if (input.signal.aborted) throw new AbortedError('The turn was cancelled.', { cause: input.signal.reason });
      const last = own.length > 0 ? own[own.length - 1] : input.history[given - 1];
      if (last?.role === 'assistant' && last.toolCalls !== undefined && last.toolCalls.length > 0) {
        const step = yield* this.#answerToolCalls(last.toolCalls, tools, input);
        if (step.requests.length > 0) return { type: 'requests', requests: step.requests, usage };
        own.push(...step.committed);
        if (step.control?.kind === 'handoff') {
          return step.control.reason === undefined
            ? { type: 'handoff', target: step.control.target ?? '', usage }
            : { type: 'handoff', target: step.control.target ?? '', reason: step.control.reason, usage };
        }
        if (step.control?.kind === 'end_conversation') return { type: 'end_conversation', reason: step.control.reason ?? 'ended by agent', usage };
        continue;
      }
      if (steps >= this.agent.maxSteps) {
        throw new MaxStepsExceededError(`Agent ${JSON.stringify(this.agent.name)} made ${steps} model calls without finishing (maxSteps ${this.agent.maxSteps}).`);
      }
      steps += 1;
      const response = yield* this.#callModel(own, given, definitions, input);
      usage = addUsage(usage, response.usage);
      const [message] = await input.journal.commit([
        response.toolCalls.length > 0
          ? { role: 'assistant', agent: this.agent.name, content: response.text, toolCalls: response.toolCalls }
          : { role: 'assistant', agent: this.agent.name, content: response.text },
      ]);
      if (message === undefined) throw new Error('ExecutorJournal.commit returned no message.');
      own.push(message);
      yield { type: 'message', sessionId: input.sessionId, branchId: input.branchId, message };
      if (response.toolCalls.length === 0) return { type: 'reply', message, usage };
    }
  }

  /** System instructions, context, then the history: `input.history`'s first `given` messages (converted once, see {@link modelMessagesOf}) and this activation's own. */
  async #modelInput(own: readonly Message[], given: number, input: ExecutorInput): Promise<readonly ModelMessage[]> {
    const instructions =
      typeof this.agent.instructions === 'string'
        ? this.agent.instructions
        : this.agent.instructions({ sessionId: input.sessionId, branchId: input.branchId, state: input.state.session });
    const base = modelMessagesOf(input.history, given);
    const head: ModelMessage[] = [{ role: 'system', content: instructions }];
    const extra = input.turnSettings?.instructions;
    if (extra !== undefined && extra !== '') head.push({ role: 'system', content: extra });
    if (input.context !== undefined) head.push(...input.context);
    const messages = head.concat(
      base.length === given ? base : base.slice(0, given),
    );
    for (const message of own) messages.push(toModelMessage(message));
    return input.prepareModelInput ? input.prepareModelInput(messages) : messages;
  }

  async *#callModel(
    own: readonly Message[],
    given: number,
    tools: ToolDefinition[],
    input: ExecutorInput,
  ): AsyncGenerator<BatonEvent, { text: string; toolCalls: ToolCall[]; usage: Usage; finishReason: FinishReason }, void> {
    let text = '';
    const toolCalls: ToolCall[] = [];
    let usage = emptyUsage();
    let finishReason: FinishReason = 'other';
    const request: ModelRequest = { messages: await this.#modelInput(own, given, input), tools, agent: this.agent.name, signal: input.signal };
    if (input.turnSettings?.modelSettings !== undefined) request.settings = input.turnSettings.modelSettings;
    const stream = this.agent.model.stream(request);
    // Raced with the signal, so a model client that ignores it cannot hold a cancelled turn.
    const iterator = stream[Symbol.asyncIterator]();
    const abort = raceAbort(input.signal);
    let done = false;
    try {
      for (;;) {
        const next = await Promise.race([iterator.next(), abort.promise]);
        if (next.done === true) {
          done = true;
          break;
        }
        const event = next.value;
        if (event.type === 'text.delta') {
          text += event.delta;
          yield { type: 'message.delta', sessionId: input.sessionId, branchId: input.branchId, agent: this.agent.name, delta: event.delta };
        } else if (event.type === 'tool_call') toolCalls.push(event.toolCall);
        else if (event.type === 'usage') usage = addUsage(usage, event.usage);
        else finishReason = event.finishReason;
      }
    } finally {
      abort.dispose();
      // Not awaited: a stream that ignores its signal may never answer `return`.
      if (!done) iterator.return?.().catch(() => undefined);
    }
    if (usage.requests === 0) usage = { ...usage, requests: 1 };
    return { text, toolCalls, usage, finishReason };
  }

  /**
   * Answers every tool call of one assistant message: results already in the journal are reused,
   * the rest run concurrently; each finished result is recorded as a pending write at once. When
   * none waits for a human, all results are committed in call order.
   */
  async *#answerToolCalls(
    calls: readonly ToolCall[],
    tools: ReadonlyMap<string, Tool>,
    input: ExecutorInput,
  ): AsyncGenerator<BatonEvent, { committed: Message[]; requests: NewRequest[]; control?: PendingWrite['control'] }, void> {
    const results = new Map<string, PendingWrite>();
    const requests: NewRequest[] = [];
    const running = new Map<string, Promise<{ id: string; outcome: Awaited<ReturnType<typeof runToolCall>> }>>();
    const base = { sessionId: input.sessionId, branchId: input.branchId };
    // What runToolCall reads, built once (`{ ...input, agent }` is a slow spread in V8).
    const callInput: Parameters<typeof runToolCall>[2] = { sessionId: input.sessionId, branchId: input.branchId, signal: input.signal, state: input.state, agent: this.agent.name };
    if (input.approvals !== undefined) callInput.approvals = input.approvals;

    /** Set when this step is left (cancelled, failed, or the caller stopped reading): late results are not journalled. */
    let left = false;
    const abort = raceAbort(input.signal);
    try {
      for (const call of calls) {
        const done = input.journal.pendingWrites.get(call.id);
        if (done !== undefined) {
          results.set(call.id, done);
          continue;
        }
        yield { type: 'tool.call', ...base, agent: this.agent.name, toolCall: call };
        // Each result is journalled as soon as its tool returns, not behind its siblings: a crash
        // re-runs only tools whose result was not journalled yet (at-least-once before `tool.result`,
        // exactly-once after it).
        running.set(
          call.id,
          runToolCall(call, tools, callInput).then(async (outcome) => {
            if (outcome.type === 'write' && !left) await input.journal.recordPendingWrite(outcome.write);
            return { id: call.id, outcome };
          }),
        );
      }
      // Raced with the signal, so a tool that ignores it cannot hold a cancelled turn (its result is discarded).
      while (running.size > 0) {
        const { id, outcome } = await Promise.race([...running.values(), abort.promise]);
        running.delete(id);
        if (outcome.type === 'request') {
          requests.push(outcome.request);
          continue;
        }
        results.set(id, outcome.write);
        yield {
          type: 'tool.result',
          ...base,
          agent: this.agent.name,
          toolCallId: id,
          toolName: outcome.write.toolName,
          content: outcome.write.content,
          isError: outcome.write.isError,
          durationMs: outcome.write.durationMs,
        };
      }
    } finally {
      abort.dispose();
      if (running.size > 0) {
        left = true;
        for (const pending of running.values()) pending.catch(() => undefined);
      }
    }
    if (requests.length > 0) {
      requests.sort((a, b) => calls.findIndex((c) => c.id === requestKey(a)) - calls.findIndex((c) => c.id === requestKey(b)));
      return { committed: [], requests };
    }

    // One control per step: the first in call order wins; a later handoff is answered with an error.
    let control: PendingWrite['control'];
    const ordered = calls.map((call) => {
      const write = results.get(call.id)!;
      if (write.control === undefined) return write;
      if (control === undefined) {
        control = write.control;
        return write;
      }
      return { ...write, control: undefined, isError: true, content: `Ignored: this response already moved control (${control.kind}${control.target ? ` to ${control.target}` : ''}). Make one handoff at a time.` };
    });
    const committed = await input.journal.commit(
      ordered.map((write) => ({
        role: 'tool' as const,
        agent: write.agent,
        content: write.content,
        toolCallId: write.toolCallId,
        toolName: write.toolName,
        isError: write.isError,
        durationMs: write.durationMs,
        createdAt: write.createdAt,
      })),
    );
    for (const message of committed) yield { type: 'message', ...base, message };
    return control === undefined ? { committed, requests: [] } : { committed, requests: [], control };
  }
}

/** The predicate of a {@link TurnSettings.tools} filter for `agent` (everything passes without one). */
function toolFilter(filter: TurnSettings['tools'], agent: string): (toolName: string) => boolean {
  if (filter === undefined) return () => true;
  if (typeof filter === 'function') return (name) => filter(name, agent);
  const names = new Set(filter);
  return (name) => names.has(name);
}
