import { type AgentExecutor, type BatonEvent, type ExecutorOutcome, type Message, StateContainer } from '@baton/core';

/**
 * Runs one activation of `executor` on a history that starts with the user's `text`, committing
 * into an in-memory array, and returns the outcome, the events and the history as it ends.
 */
export async function runAgent(
  executor: AgentExecutor,
  text: string,
): Promise<{ outcome: ExecutorOutcome; events: BatonEvent[]; history: Message[] }> {
  const history: Message[] = [{ id: 'm1', seq: 1, role: 'user', content: text, createdAt: new Date().toISOString() }];
  const generator = executor.execute({
    sessionId: 's-1',
    branchId: 'main',
    turn: 1,
    history,
    state: new StateContainer({ session: {}, branch: {} }),
    signal: new AbortController().signal,
    journal: {
      pendingWrites: new Map(),
      recordPendingWrite: async () => undefined,
      commit: async (added) =>
        added.map((m) => {
          const message = {
            ...m,
            id: `m${history.length + 1}`,
            seq: history.length + 1,
            createdAt: new Date().toISOString(),
          } as Message;
          history.push(message);
          return message;
        }),
    },
  });
  const events: BatonEvent[] = [];
  for (;;) {
    const next = await generator.next();
    if (next.done === true) return { outcome: next.value, events, history };
    events.push(next.value);
  }
}
