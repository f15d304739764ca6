/**
 * Builds the sessions the resume bench opens: a history of copies of one real turn, written straight
 * to the store, then one real turn through the workflow that pauses on an approval.
 */
import { type Checkpoint, InMemoryStore, type Message, type Store } from '@baton/core';
import { approvalDesk } from './approvalDesk.js';

/** One finished turn as Baton stores it, and its turn-end checkpoint. */
export interface TemplateTurn {
  messages: Message[];
  checkpoint: Checkpoint;
}

/** One finished turn's messages as Baton stores them (triage hands off, billing's refund is approved, billing answers). */
export async function templateTurn(): Promise<TemplateTurn> {
  const store = new InMemoryStore();
  const session = await approvalDesk(store).session({ id: 'template' });
  for await (const _ of session.send('Please refund order 1234')) {
    // drain
  }
  for await (const _ of session.respond(session.pendingRequests[0]!.id, { approved: true })) {
    // drain
  }
  // The turn-end checkpoint (routing idle, nothing pending): the model of the older checkpoints a session piles up.
  const checkpoint = (await store.loadCheckpoint('template', 'main'))!;
  return { messages: await store.readMessages('template', 'main'), checkpoint };
}

/** `turns` copies of the template turn, seqs from 1, every id and tool call id fresh. */
export function historyOf(template: readonly Message[], turns: number): Message[] {
  const out: Message[] = [];
  const base = Date.parse('2026-01-01T00:00:00.000Z');
  for (let t = 0; t < turns; t += 1) {
    for (const message of template) {
      const seq = out.length + 1;
      const copy: Message = { ...message, id: `m-${seq}`, seq, createdAt: new Date(base + seq * 1000).toISOString() };
      if (message.toolCalls !== undefined)
        copy.toolCalls = message.toolCalls.map((call) => ({ ...call, id: `${call.id}-${t}` }));
      if (message.toolCallId !== undefined) copy.toolCallId = `${message.toolCallId}-${t}`;
      out.push(copy);
    }
  }
  return out;
}

/** Extra things a session carries besides its history, for the branch/checkpoint table. */
export interface Extras {
  forks?: number;
  olderCheckpoints?: number;
}

/** Writes a session of `turns` finished turns plus one turn paused on an approval. */
export async function preparePausedSession(
  store: Store,
  id: string,
  template: TemplateTurn,
  turns: number,
  extras: Extras = {},
): Promise<void> {
  await store.createSession({ id });
  const history = historyOf(template.messages, turns);
  for (let from = 0; from < history.length; from += 2000)
    await store.appendMessages(id, 'main', history.slice(from, from + 2000));
  for (let i = 0; i < (extras.olderCheckpoints ?? 0); i += 1) {
    const createdAt = new Date(Date.parse('2025-01-01T00:00:00.000Z') + i * 1000).toISOString();
    await store.saveCheckpoint({
      ...template.checkpoint,
      id: `old-${i}`,
      parentId: i === 0 ? null : `old-${i - 1}`,
      sessionId: id,
      branchId: 'main',
      createdAt,
      throughSeq: ((i % turns) + 1) * template.messages.length,
    });
  }
  for (let i = 0; i < (extras.forks ?? 0); i += 1) {
    await store.forkBranch(id, {
      branchId: `fork-${i}`,
      parent: { branchId: 'main', atSeq: Math.max(1, Math.floor((history.length * i) / (extras.forks ?? 1))) },
    });
  }
  // Windowed: the paused turn's stored messages are the same, and a long history is not read back whole to write it.
  const session = await approvalDesk(store, { historyWindow: 100 }).session({ id, branch: 'main' });
  for await (const _ of session.send('Please refund order 9999')) {
    // drain
  }
  if (session.pendingRequests.length !== 1) throw new Error(`session ${id} did not pause on the approval`);
}
