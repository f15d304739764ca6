import { readFileSync } from 'node:fs';
import {
  type Checkpoint,
  HumanExecutor,
  InMemoryHumanQueue,
  InMemoryStore,
  type Message,
  type Session,
} from '@baton/core';
import { describe, expect, it } from 'vitest';
import { HandoffBuilder } from '../src/index.js';
import { collect, danglingToolCalls, lastOf, scriptedAgent } from './support/helpers.js';

/** Saved stores of earlier versions: each must keep loading and resuming. */
const CORPUS = ['checkpoint.v1.pausedOnUserInput.json'];

describe('persisted checkpoint corpus', () => {
  for (const file of CORPUS) {
    it(`loads and resumes ${file}`, async () => {
      const saved = JSON.parse(readFileSync(new URL(`./fixtures/${file}`, import.meta.url), 'utf8')) as {
        session: Session;
        messages: Message[];
        checkpoint: Checkpoint;
      };
      const store = new InMemoryStore();
      await store.createSession({
        id: saved.session.id,
        ...(saved.session.userId ? { userId: saved.session.userId } : {}),
        createdAt: saved.session.createdAt,
      });
      await store.appendMessages(saved.session.id, 'main', saved.messages);
      await store.saveCheckpoint(saved.checkpoint);

      const triage = scriptedAgent('triage', () => ({ text: 'unused' }));
      const billing = scriptedAgent('billing', (request) => ({
        text: `Thanks, I found account ${lastOf(request)?.content}.`,
      }));
      const session = await new HandoffBuilder()
        .participants(triage, billing)
        .store(store)
        .build()
        .session({ id: saved.session.id });
      expect(session.activeAgent).toBe('billing');
      const [request] = session.pendingRequests;
      expect(request).toMatchObject({ type: 'user_input', prompt: 'Your account id?' });
      await collect(session.respond(request!.id, 'AC-99812'));
      const stored = await store.readMessages(saved.session.id, 'main');
      expect(stored.at(-1)?.content).toBe('Thanks, I found account AC-99812.');
      expect(danglingToolCalls(stored)).toEqual([]);
      expect(
        billing.model.requests[0]!.messages.filter((m) => m.content === 'I was charged twice for order 1234'),
      ).toHaveLength(1);
    });
  }
});

describe('persisted checkpoint corpus: human_step requests', () => {
  it('loads checkpoint.v1.pausedOnHumanStep.json and the operator answer ends the turn', async () => {
    const saved = JSON.parse(
      readFileSync(new URL('./fixtures/checkpoint.v1.pausedOnHumanStep.json', import.meta.url), 'utf8'),
    ) as {
      session: Session;
      messages: Message[];
      checkpoint: Checkpoint;
    };
    const store = new InMemoryStore();
    await store.createSession({ id: saved.session.id, createdAt: saved.session.createdAt });
    await store.appendMessages(saved.session.id, 'main', saved.messages);
    await store.saveCheckpoint(saved.checkpoint);

    const triage = scriptedAgent('triage', () => ({ text: 'unused' }));
    const operator = new HumanExecutor({
      name: 'operator',
      description: 'A human for hard cases.',
      queue: new InMemoryHumanQueue(),
    });
    const session = await new HandoffBuilder()
      .participants(triage, operator)
      .store(store)
      .build()
      .session({ id: saved.session.id });
    expect(session.routingState).toBe('awaitingRequest');
    const [request] = session.pendingRequests;
    expect(request).toMatchObject({ type: 'human_step', agent: 'operator', prompt: 'My parcel arrived broken' });
    await collect(session.respond(request!.id, 'A replacement is on its way.'));
    const stored = await store.readMessages(saved.session.id, 'main');
    expect(stored.at(-1)).toMatchObject({
      role: 'assistant',
      agent: 'operator',
      content: 'A replacement is on its way.',
    });
    expect(session.pendingRequests).toEqual([]);
  });
});
