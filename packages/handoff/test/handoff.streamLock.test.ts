import { InMemoryStore } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { HandoffBuilder } from '../src/index.js';
import { collect, danglingToolCalls, deskAgents } from './support/helpers.js';

describe('the session lock held by an event stream', () => {
  it('is released when the caller leaves the for-await loop early; the next send finishes the left turn and runs', async () => {
    const { triage, billing } = deskAgents();
    const store = new InMemoryStore();
    const session = await new HandoffBuilder()
      .participants(triage, billing)
      .store(store)
      .build()
      .session({ id: 'lock-1' });
    for await (const event of session.send('first')) {
      if (event.type === 'message') break; // the user message is stored; the agents have not run
    }
    const events = await Promise.race([
      collect(session.send('second')),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the lock was not released')), 5_000)),
    ]);
    expect(events.at(-1)?.type).toBe('turn.completed');
    expect(events.filter((e) => e.type === 'turn.completed')).toHaveLength(2); // the left turn, then the new one
    const stored = await store.readMessages('lock-1', 'main');
    expect(stored.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['first', 'second']);
    expect(danglingToolCalls(stored)).toEqual([]);
  });

  it('a turn left before its user message was stored leaves nothing behind', async () => {
    const { triage, billing } = deskAgents();
    const store = new InMemoryStore();
    const session = await new HandoffBuilder()
      .participants(triage, billing)
      .store(store)
      .build()
      .session({ id: 'lock-2' });
    for await (const event of session.send('never mind')) {
      if (event.type === 'turn.started') break;
    }
    const events = await collect(session.send('hello'));
    expect(events.filter((e) => e.type === 'turn.completed').map((e) => e.type === 'turn.completed' && e.turn)).toEqual(
      [1],
    );
    const stored = await store.readMessages('lock-2', 'main');
    expect(stored.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['hello']);
    expect(danglingToolCalls(stored)).toEqual([]);
  });
});
