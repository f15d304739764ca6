/**
 * One step a human operator is asked to take: answer the customer as participant `agent` (or hand
 * off). `id` is the step id of the `human_step` request that waits for it.
 */
export interface HumanTask {
  /** The step id (stable for one step: enqueueing the same step twice keeps one task). */
  id: string;
  sessionId: string;
  branchId: string;
  turn: number;
  /** The participant the operator acts as. */
  agent: string;
  /** What the operator is asked to do (by default, the user's last message). */
  prompt: string;
  /** ISO-8601 time the step was queued. */
  createdAt: string;
}

/**
 * Where a `HumanExecutor` puts steps for human operators. An operator's tool lists the tasks, opens
 * the session of one (`task.sessionId`, `task.branchId`) and answers the pending `human_step`
 * request whose `stepId` is `task.id` through the session (`session.respond(request.id, answer)`);
 * the executor removes the task when it applies the answer. Implement it over any queue service;
 * {@link InMemoryHumanQueue} keeps tasks in memory.
 *
 * @example
 * ```ts
 * import type { HumanQueue, HumanTask } from '@baton/core';
 * const tasks = new Map<string, HumanTask>();
 * const queue: HumanQueue = {
 *   async enqueue(task) { if (!tasks.has(task.id)) tasks.set(task.id, task); },
 *   async list() { return [...tasks.values()]; },
 *   async remove(id) { tasks.delete(id); },
 * };
 * ```
 */
export interface HumanQueue {
  /** Adds a task; a task with the same id already queued is kept as it is (idempotent). */
  enqueue(task: HumanTask): Promise<void>;
  /** Queued tasks, oldest first. */
  list(): Promise<HumanTask[]>;
  /** Removes a task (no-op when it is not queued). */
  remove(id: string): Promise<void>;
}

/**
 * A {@link HumanQueue} in memory (one process; tasks are lost when it exits).
 *
 * @example
 * ```ts
 * import { InMemoryHumanQueue } from '@baton/core';
 * const queue = new InMemoryHumanQueue();
 * const [task] = await queue.list();
 * ```
 */
export class InMemoryHumanQueue implements HumanQueue {
  readonly #tasks = new Map<string, HumanTask>();

  async enqueue(task: HumanTask): Promise<void> {
    if (!this.#tasks.has(task.id)) this.#tasks.set(task.id, { ...task });
  }

  async list(): Promise<HumanTask[]> {
    return [...this.#tasks.values()].map((task) => ({ ...task }));
  }

  async remove(id: string): Promise<void> {
    this.#tasks.delete(id);
  }
}
