import {
  type BatonEvent,
  createId,
  type Executor,
  type ExecutorInput,
  type ExecutorJournal,
  type ExecutorOutcome,
  type Message,
  type NewMessage,
  type PendingWrite,
  StateContainer,
} from '@baton/core';

/**
 * An in-memory {@link ExecutorJournal} for tests: `commit` assigns ids, `seq` (from 1, in order)
 * and `createdAt`, and keeps every committed message in `messages`; pending writes are kept by
 * tool call id. Pass `pendingWrites` to script a resumed step.
 *
 * @example
 * ```ts
 * const journal = new TestJournal();
 * const history = await journal.commit([{ role: 'user', content: 'Hi' }]);
 * ```
 */
export class TestJournal implements ExecutorJournal {
  readonly messages: Message[] = [];
  readonly pendingWrites: Map<string, PendingWrite>;
  /** Every pending write recorded, in the order recorded. */
  readonly recorded: PendingWrite[] = [];
  /** How many times `commit` was called, and with how many messages each time. */
  readonly commits: number[] = [];

  constructor(pendingWrites: readonly PendingWrite[] = []) {
    this.pendingWrites = new Map(pendingWrites.map((w) => [w.toolCallId, w]));
  }

  async commit(messages: readonly NewMessage[]): Promise<Message[]> {
    this.commits.push(messages.length);
    const stored: Message[] = [];
    for (const m of messages) {
      const { id, createdAt, ...rest } = m;
      const message = {
        ...rest,
        id: id ?? createId(),
        seq: this.messages.length + 1,
        createdAt: createdAt ?? new Date().toISOString(),
      } as Message;
      this.messages.push(message);
      stored.push(message);
    }
    return stored;
  }

  async recordPendingWrite(write: PendingWrite): Promise<void> {
    this.recorded.push(write);
    this.pendingWrites.set(write.toolCallId, write);
  }
}

/** What {@link runExecutor} gives: every event yielded, and the outcome returned. */
export interface ExecutorRun {
  events: BatonEvent[];
  outcome: ExecutorOutcome;
}

/**
 * The input of one activation over a {@link TestJournal}: session `session-1`, branch `main`, turn 1,
 * the journal's messages as history, empty state, a signal that never aborts; `extra` overrides any field.
 */
export function executorInput(
  journal: TestJournal,
  extra: Partial<Omit<ExecutorInput, 'journal'>> = {},
): ExecutorInput {
  return {
    sessionId: 'session-1',
    branchId: 'main',
    turn: 1,
    history: [...journal.messages],
    state: new StateContainer({ session: {}, branch: {} }),
    signal: new AbortController().signal,
    ...extra,
    journal,
  };
}

/**
 * Runs an executor once over a {@link TestJournal} and collects its events and outcome.
 *
 * @param history the branch history the executor sees (usually `journal.messages`)
 * @param extra any other {@link ExecutorInput} fields (approvals, tools, signal, …)
 */
export async function runExecutor(
  executor: Executor,
  journal: TestJournal,
  extra: Partial<Omit<ExecutorInput, 'journal'>> = {},
): Promise<ExecutorRun> {
  const input = executorInput(journal, extra);
  const events: BatonEvent[] = [];
  const generator = executor.execute(input);
  for (;;) {
    const next = await generator.next();
    if (next.done) return { events, outcome: next.value };
    events.push(next.value);
  }
}
