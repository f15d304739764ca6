import type { BatonEvent } from '../conversation/events.js';
import type { Executor, ExecutorInput, ExecutorOutcome } from './executor.js';
import { emptyUsage } from '../models/modelClient.js';
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
 * control to another participant instead (the handoff is not a stored message: a crash before the
 * turn's next durability point asks the operator again). The step id is derived from the session,
 * branch, turn and history head, so a step run again after a crash queues the same task once.
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
    const stepId = `${input.sessionId}/${input.branchId}/${input.turn}/${input.history.at(-1)?.seq ?? 0}/${this.name}`;
    const answer = input.humanAnswers?.get(stepId);
    if (answer === undefined) {
      const prompt = this.#prompt(input);
      await this.#queue.enqueue({ id: stepId, sessionId: input.sessionId, branchId: input.branchId, turn: input.turn, agent: this.name, prompt, createdAt: new Date().toISOString() });
      return { type: 'requests', requests: [{ type: 'human_step', agent: this.name, stepId, prompt }], usage };
    }
    await this.#queue.remove(stepId);
    if (typeof answer === 'object' && 'handoff' in answer) {
      return answer.reason === undefined ? { type: 'handoff', target: answer.handoff, usage } : { type: 'handoff', target: answer.handoff, reason: answer.reason, usage };
    }
    const content = typeof answer === 'string' ? answer : answer.reply;
    const [message] = await input.journal.commit([{ role: 'assistant', agent: this.name, content, metadata: { humanStep: stepId } }]);
    if (message === undefined) throw new Error('ExecutorJournal.commit returned no message.');
    yield { type: 'message', sessionId: input.sessionId, branchId: input.branchId, message };
    return { type: 'reply', message, usage };
  }
}
