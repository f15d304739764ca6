import { readFileSync } from 'node:fs';
import { type Checkpoint, InMemoryStore, type Message, type Session } from '@baton/core';
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
      await store.createSession({ id: saved.session.id, ...(saved.session.userId ? { userId: saved.session.userId } : {}), createdAt: saved.session.createdAt });
      await store.appendMessages(saved.session.id, 'main', saved.messages);
      await store.saveCheckpoint(saved.checkpoint);

      const triage = scriptedAgent('triage', () => ({ text: 'unused' }));
      const billing = scriptedAgent('billing', (request) => ({ text: `Thanks, I found account ${lastOf(request)?.content}.` }));
      const session = await new HandoffBuilder().participants(triage, billing).store(store).build().session({ id: saved.session.id });
      expect(session.activeAgent).toBe('billing');
      const [request] = session.pendingRequests;
      expect(request).toMatchObject({ type: 'user_input', prompt: 'Your account id?' });
      await collect(session.respond(request!.id, 'AC-99812'));
      const stored = await store.readMessages(saved.session.id, 'main');
      expect(stored.at(-1)?.content).toBe('Thanks, I found account AC-99812.');
      expect(danglingToolCalls(stored)).toEqual([]);
      expect(billing.model.requests[0]!.messages.filter((m) => m.content === 'I was charged twice for order 1234')).toHaveLength(1);
    });
  }
});
