import {
  type BatonEvent,
  type ContextProvider,
  createId,
  type Executor,
  type ExecutorJournal,
  type ExecutorOutcome,
  MAIN_BRANCH,
  type Message,
  type NewMessage,
  type PendingWrite,
  type Session,
  StateContainer,
  type Store,
} from '@baton/core';

/**
 * Appends messages to a session's branch in a real store, as a runtime would: ids, the next seqs
 * and `createdAt` (1 ms apart from `startAt`, or now) are assigned here.
 *
 * @returns the stored messages
 */
export async function appendConversation(
  store: Store,
  sessionId: string,
  messages: readonly NewMessage[],
  options: { branchId?: string; startAt?: Date; tenantId?: string } = {},
): Promise<Message[]> {
  const branchId = options.branchId ?? MAIN_BRANCH;
  const scope = options.tenantId === undefined ? {} : { tenantId: options.tenantId };
  const existing = await store.readMessages(sessionId, branchId, scope);
  let seq = existing.at(-1)?.seq ?? 0;
  const start = options.startAt?.getTime() ?? Date.now();
  const stored = messages.map((m, i) => {
    const { id, createdAt, ...rest } = m;
    seq += 1;
    return { ...rest, id: id ?? createId(), seq, createdAt: createdAt ?? new Date(start + i).toISOString() } as Message;
  });
  await store.appendMessages(sessionId, branchId, stored, scope);
  return stored;
}

/**
 * Closes a session the way a runtime does on `session.close({ reason })`: a compare-and-set update
 * to `closed`, then `onSessionClose` of the given providers with the `main` branch's messages.
 */
export async function closeSession(
  store: Store,
  sessionId: string,
  reason: string,
  providers: readonly ContextProvider[],
  scope: { tenantId?: string } = {},
): Promise<Session> {
  const current = (await store.getSession(sessionId, scope))!;
  const session = await store.updateSession(
    sessionId,
    { status: 'closed', closedAt: new Date().toISOString(), closedReason: reason },
    { expectedVersion: current.version, ...scope },
  );
  const messages = await store.readMessages(sessionId, MAIN_BRANCH, scope);
  const agents = [
    ...new Set(messages.filter((m) => m.role === 'assistant' && m.agent !== undefined).map((m) => m.agent!)),
  ];
  for (const provider of providers) await provider.onSessionClose?.({ session, reason, messages, agents, store });
  return session;
}

/** An {@link ExecutorJournal} that commits to a real store's branch (the runtime's job in production). */
export class StoreJournal implements ExecutorJournal {
  readonly pendingWrites = new Map<string, PendingWrite>();
  constructor(
    readonly store: Store,
    readonly sessionId: string,
    readonly scope: { tenantId?: string } = {},
  ) {}
  commit(messages: readonly NewMessage[]): Promise<Message[]> {
    return appendConversation(this.store, this.sessionId, messages, this.scope);
  }
  async recordPendingWrite(write: PendingWrite): Promise<void> {
    this.pendingWrites.set(write.toolCallId, write);
  }
}

/** Runs an executor over a session's `main` branch in a real store; returns its events and outcome. */
export async function runOnStore(
  executor: Executor,
  store: Store,
  sessionId: string,
  scope: { tenantId?: string } = {},
): Promise<{ events: BatonEvent[]; outcome: ExecutorOutcome }> {
  const generator = executor.execute({
    sessionId,
    branchId: MAIN_BRANCH,
    turn: 1,
    history: await store.readMessages(sessionId, MAIN_BRANCH, scope),
    journal: new StoreJournal(store, sessionId, scope),
    state: new StateContainer({ session: {}, branch: {} }),
    signal: new AbortController().signal,
  });
  const events: BatonEvent[] = [];
  for (;;) {
    const next = await generator.next();
    if (next.done) return { events, outcome: next.value };
    events.push(next.value);
  }
}
