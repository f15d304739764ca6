import { type Checkpoint, createId, type Message, type OpenToolCall, openCallResults, type Store, type TenantScope } from '@baton/core';

/** The tool calls of one branch that have no result yet (a paused step: a pending request, or results not yet committed). */
export interface OpenToolCalls {
  branchId: string;
  /** The branch's last seq; results are appended after it. */
  lastSeq: number;
  calls: OpenToolCall[];
}

/**
 * The tool calls left without a result on each branch of the session, read from the stored
 * history (a fork's parent prefix included: a fork never splits calls from their results).
 *
 * @param scope the session's tenant (every store call carries it)
 * @returns one entry per branch that has open calls (none when every call has its result)
 * @throws {NotFoundError} when the session does not exist (for this tenant); the store's errors
 */
export async function findOpenToolCalls(store: Store, sessionId: string, scope: TenantScope = {}): Promise<OpenToolCalls[]> {
  const found: OpenToolCalls[] = [];
  for (const branch of await store.listBranches(sessionId, scope)) {
    const messages = await store.readMessages(sessionId, branch.id, scope);
    const open = new Map<string, OpenToolCall>();
    for (const message of messages) {
      for (const call of message.toolCalls ?? []) open.set(call.id, { call, agent: message.agent });
      if (message.role === 'tool' && message.toolCallId !== undefined) open.delete(message.toolCallId);
    }
    if (open.size > 0) found.push({ branchId: branch.id, lastSeq: messages.at(-1)?.seq ?? 0, calls: [...open.values()] });
  }
  return found;
}

/**
 * Gives each open tool call a result before the session is closed, so committed history keeps
 * every tool call answered (docs/architecture.md invariant 3): the call's finished result when the branch's
 * newest checkpoint holds one (a pending write: the tool ran, so it is kept and never runs again),
 * otherwise an error result `The conversation was closed before this was answered (<reason>).`
 * (a question the user never answered, an approval nobody gave: the tool did not run).
 *
 * @param open from {@link findOpenToolCalls}
 * @param reason the close reason, quoted in the error results
 * @param now the results' `createdAt`
 * @param scope the session's tenant (every store call carries it)
 * @returns the messages appended
 * @throws {ConcurrencyError} when another writer appended to a branch meanwhile (the session is
 *   active again); {@link CheckpointCorruptError} when a branch's newest checkpoint is damaged
 */
export async function answerOpenToolCalls(
  store: Store,
  sessionId: string,
  open: readonly OpenToolCalls[],
  reason: string,
  now: Date,
  scope: TenantScope = {},
): Promise<Message[]> {
  const appended: Message[] = [];
  for (const branch of open) {
    const checkpoint: Checkpoint | undefined = await store.loadCheckpoint(sessionId, branch.branchId, undefined, scope);
    const finished = (id: string) => checkpoint?.pendingWrites.find((w) => w.toolCallId === id);
    // The close travels with the results: a handoff runtime that loads the session before the sweep
    // has closed it (a crash in between) closes it instead of running the agent again.
    const answers = openCallResults(branch.calls, finished, `The conversation was closed before this was answered (${reason}).`, {
      kind: 'end_conversation',
      reason,
    });
    const results = answers.map((answer, index): Message => ({ ...answer, id: createId(), seq: branch.lastSeq + 1 + index, createdAt: now.toISOString() }));
    await store.appendMessages(sessionId, branch.branchId, results, scope);
    appended.push(...results);
  }
  return appended;
}
