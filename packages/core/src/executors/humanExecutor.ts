import { runToolCall } from '../agents/toolCall.js';
import type { BatonEvent } from '../conversation/events.js';
import type { ToolCall } from '../conversation/message.js';
import type { HumanStepAnswer, Request } from '../conversation/request.js';
import { createId } from '../ids.js';
import { emptyUsage, type Usage } from '../models/modelClient.js';
import type { Executor, ExecutorInput, ExecutorOutcome } from './executor.js';
import type { HumanQueue } from './humanQueue.js';

/** What `new HumanExecutor(…)` takes. */
export interface HumanExecutorOptions {
  /** The participant's name (used in `handoff_to_<name>`). */
  name: string;
  /** What other agents see when they may hand off to it. */
  description: string;
  /** Where its steps go. */
  queue: HumanQueue;
  /** What the operator is asked, from the activation's input (default: the user's last message). */
  prompt?: (input: ExecutorInput) => string;
}

/**
 * A participant whose steps a human operator takes. When it is activated it puts a task on its
 * {@link HumanQueue} and pauses the turn with a `human_step` request (no tool call: the request
 * names the step by `stepId`, the task's id). The turn stays paused — across restarts, in the
 * checkpoint like any request — until the operator answers through the session:
 * `session.respond(request.id, 'text')` (or `{ reply: 'text' }`) commits the text as this
 * participant's assistant message, the answer to the user; `{ handoff: 'billing', reason? }` hands
 * control to another participant instead, stored like an agent's handoff so history shows it: an
 * assistant message of this participant (with `metadata.humanStep`) calling `handoff_to_billing`,
 * and its tool result ("Transferred to billing."), committed together. A handoff the routing refuses
 * (no such edge, or the turn's handoff limit) is stored with its error result, and the operator is
 * asked again (a new task). When the turn is discarded or the session closed while a step waits
 * (from any branch; by the idle sweep when it is given this participant), or the user erased with
 * `workflow.eraseUser`, its task is removed from the queue ({@link HumanExecutor.withdrawRequests}). The step id is derived from the session, branch, turn and history
 * head, so a step run again after a crash queues the same task once.
 *
 * @example
 * ```ts
 * import { HumanExecutor, InMemoryHumanQueue } from '@baton/core';
 * const queue = new InMemoryHumanQueue();
 * const operator = new HumanExecutor({ name: 'operator', description: 'A human agent for hard cases.', queue });
 * // …participants(triage, operator); later, at the operator's desk:
 * // const [task] = await queue.list();
 * // const session = await desk.session({ id: task.sessionId });
 * // const request = session.pendingRequests.find((r) => r.type === 'human_step' && r.stepId === task.id)!;
 * // for await (const event of session.respond(request.id, 'I have refunded you.')) {}
 * ```
 */
export class HumanExecutor implements Executor {
  readonly name: string;
  readonly description: string;
  readonly #queue: HumanQueue;
  readonly #prompt: (input: ExecutorInput) => string;

  constructor(options: HumanExecutorOptions) {
    this.name = options.name;
    this.description = options.description;
    this.#queue = options.queue;
    this.#prompt = options.prompt ?? ((input) => input.history.findLast((m) => m.role === 'user')?.content ?? '');
  }

  async *execute(input: ExecutorInput): AsyncGenerator<BatonEvent, ExecutorOutcome, void> {
    const usage = emptyUsage();
    const [stepId, answer] = this.#answered(input) ?? [this.#stepId(input, input.history.at(-1)?.seq ?? 0), undefined];
    if (answer === undefined) return this.#ask(input, stepId, this.#prompt(input), usage);
    await this.#queue.remove(stepId);
    if (typeof answer === 'object' && 'handoff' in answer) return yield* this.#handOff(input, stepId, answer, usage);
    const content = typeof answer === 'string' ? answer : answer.reply;
    const [message] = await input.journal.commit([
      { role: 'assistant', agent: this.name, content, metadata: { humanStep: stepId } },
    ]);
    if (message === undefined) throw new Error('ExecutorJournal.commit returned no message.');
    yield { type: 'message', sessionId: input.sessionId, branchId: input.branchId, message };
    return { type: 'reply', message, usage };
  }

  /** Removes the queued tasks of dropped `human_step` requests (a discarded turn, a closed session). */
  async withdrawRequests(requests: readonly Request[]): Promise<void> {
    for (const request of requests) if (request.type === 'human_step') await this.#queue.remove(request.stepId);
  }

  /**
   * The operator's handoff: the call to the runtime's `handoff_to_<target>` tool and its result,
   * committed as this participant's messages; a refused handoff asks the operator again. Without
   * runtime tools (`input.tools` absent) the handoff is reported to the runtime unstored.
   */
  async *#handOff(
    input: ExecutorInput,
    stepId: string,
    answer: { handoff: string; reason?: string },
    usage: Usage,
  ): AsyncGenerator<BatonEvent, ExecutorOutcome, void> {
    const reported: ExecutorOutcome =
      answer.reason === undefined
        ? { type: 'handoff', target: answer.handoff, usage }
        : { type: 'handoff', target: answer.handoff, reason: answer.reason, usage };
    if (input.tools === undefined) return reported;
    const call: ToolCall = {
      id: `call_${createId()}`,
      name: `handoff_to_${answer.handoff}`,
      arguments: JSON.stringify(answer.reason === undefined ? {} : { reason: answer.reason }),
    };
    const outcome = await runToolCall(call, new Map(input.tools.map((t) => [t.name, t])), {
      ...input,
      agent: this.name,
    });
    if (outcome.type !== 'write') return reported;
    const { write } = outcome;
    const committed = await input.journal.commit([
      { role: 'assistant', agent: this.name, content: '', toolCalls: [call], metadata: { humanStep: stepId } },
      {
        role: 'tool',
        agent: this.name,
        content: write.content,
        toolCallId: call.id,
        toolName: call.name,
        isError: write.isError,
        durationMs: write.durationMs,
        ...(write.control === undefined ? {} : { metadata: { control: write.control } }),
      },
    ]);
    for (const message of committed)
      yield { type: 'message', sessionId: input.sessionId, branchId: input.branchId, message };
    if (write.control?.kind === 'handoff') return reported;
    // Refused: the error result is stored; the operator is asked again, at the new history head.
    const retryId = this.#stepId(input, committed.at(-1)?.seq ?? 0);
    return this.#ask(input, retryId, `${this.#prompt(input)}\n(Your handoff was refused: ${write.content})`, usage);
  }

  /**
   * The operator's answer to this participant's step in this turn, with its step id: the step at
   * the history head, or one asked again after a refused handoff (whose id names a later head).
   */
  #answered(input: ExecutorInput): [string, HumanStepAnswer] | undefined {
    const prefix = `${input.sessionId}/${input.branchId}/${input.turn}/`;
    for (const entry of input.humanAnswers ?? [])
      if (entry[0].startsWith(prefix) && entry[0].endsWith(`/${this.name}`)) return entry;
    return undefined;
  }

  /** The id of the step at history head `seq` (stable, so a step run again after a crash is the same task). */
  #stepId(input: ExecutorInput, seq: number): string {
    return `${input.sessionId}/${input.branchId}/${input.turn}/${seq}/${this.name}`;
  }

  /** Queues the step for an operator and pauses the turn on its `human_step` request. */
  async #ask(input: ExecutorInput, stepId: string, prompt: string, usage: Usage): Promise<ExecutorOutcome> {
    await this.#queue.enqueue({
      id: stepId,
      sessionId: input.sessionId,
      branchId: input.branchId,
      turn: input.turn,
      agent: this.name,
      prompt,
      createdAt: new Date().toISOString(),
    });
    return { type: 'requests', requests: [{ type: 'human_step', agent: this.name, stepId, prompt }], usage };
  }
}
