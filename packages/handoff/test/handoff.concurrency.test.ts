import { ConcurrencyError, InMemoryStore, type Message } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { collect, danglingToolCalls } from './support/helpers.js';
import { lookUpDesk } from './support/scenarioDesks.js';

/** An agent that looks something up (a 15 ms tool) before answering, so two turns would overlap without a lock. */
function slowDesk(store: InMemoryStore) {
  return lookUpDesk(store);
}

/** Whether each turn's messages are contiguous: user, assistant call, tool result, answer — never mixed with another turn's. */
function turnsOf(messages: readonly Message[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < messages.length; i += 4) {
    const [user, call, result, answer] = messages.slice(i, i + 4);
    expect(call?.toolCalls?.[0]?.arguments).toBe(JSON.stringify({ q: user?.content }));
    expect(result?.content).toBe(`found ${user?.content}`);
    expect(answer?.content).toBe(`answer (found ${user?.content})`);
    out.push(user!.content);
  }
  return out;
}

describe('concurrent sends (Done-when 8)', () => {
  it('in one process the second send on a session waits for the first', async () => {
    const store = new InMemoryStore();
    const workflow = slowDesk(store);
    const session = await workflow.session({ id: 'c-1' });
    await Promise.all([collect(session.send('one')), collect(session.send('two'))]);
    const stored = await store.readMessages('c-1', 'main');
    expect(turnsOf(stored)).toEqual(['one', 'two']);
    expect(danglingToolCalls(stored)).toEqual([]);
  });

  it('two session objects of one workflow share the lock and see each other’s turns', async () => {
    const store = new InMemoryStore();
    const workflow = slowDesk(store);
    const a = await workflow.session({ id: 'c-2' });
    const b = await workflow.session({ id: 'c-2' });
    await Promise.all([collect(a.send('from a')), collect(b.send('from b')), collect(a.send('a again'))]);
    const stored = await store.readMessages('c-2', 'main');
    expect(turnsOf(stored).sort()).toEqual(['a again', 'from a', 'from b']);
    expect(b.messages.length === 12 || a.messages.length === 12).toBe(true);
  });

  it('across processes (two workflows over one store) the loser gets a ConcurrencyError and writes nothing; its next call works', async () => {
    const store = new InMemoryStore();
    const first = await slowDesk(store).session({ id: 'c-3' });
    const second = await slowDesk(store).session({ id: 'c-3' });
    const outcomes = await Promise.allSettled([collect(first.send('first')), collect(second.send('second'))]);
    const rejected = outcomes.filter((o) => o.status === 'rejected');
    expect(rejected).toHaveLength(1);
    expect((rejected[0] as PromiseRejectedResult).reason).toBeInstanceOf(ConcurrencyError);
    const winner = outcomes[0]!.status === 'fulfilled' ? 'first' : 'second';
    const loser = winner === 'first' ? second : first;
    expect(turnsOf(await store.readMessages('c-3', 'main'))).toEqual([winner]);

    await collect(loser.send('retry'));
    expect(turnsOf(await store.readMessages('c-3', 'main'))).toEqual([winner, 'retry']);
  });
});
