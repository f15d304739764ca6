/**
 * A context provider's `beforeActivation` (core's ContextProvider): called before each agent's
 * activation with that agent's name and the user's newest message; its context reaches that
 * agent's model inputs only, after the turn's `beforeTurn` context, and is never stored.
 */
import { type BeforeActivationArgs, type ContextProvider, InMemoryStore, type ModelMessage } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { HandoffBuilder } from '../src/index.js';
import { collect, deskAgents } from './support/helpers.js';

describe('beforeActivation', () => {
  it("gives each agent of a handoff turn its own context after the turn's, and stores none of it", async () => {
    const calls: Pick<BeforeActivationArgs, 'agent' | 'input'>[] = [];
    const provider: ContextProvider = {
      name: 'knowledge',
      beforeTurn: async ({ input }) => [{ role: 'context', content: `Turn context for "${input}"` }],
      beforeActivation: async ({ agent, input }) => {
        calls.push({ agent, input });
        return [{ role: 'context', content: `Knowledge for ${agent}` }];
      },
    };
    const { triage, billing } = deskAgents();
    const store = new InMemoryStore();
    const session = await new HandoffBuilder()
      .participants(triage, billing)
      .contextProviders(provider)
      .store(store)
      .build()
      .session({ id: 'act-1' });
    await collect(session.send('I was charged twice'));

    expect(calls).toEqual([
      { agent: 'triage', input: 'I was charged twice' },
      { agent: 'billing', input: 'I was charged twice' },
    ]);
    const contextOf = (messages: readonly ModelMessage[]) =>
      messages.filter((m) => m.role === 'context').map((m) => m.content);
    expect(contextOf(triage.model.requests[0]!.messages)).toEqual([
      'Turn context for "I was charged twice"',
      'Knowledge for triage',
    ]);
    expect(contextOf(billing.model.requests[0]!.messages)).toEqual([
      'Turn context for "I was charged twice"',
      'Knowledge for billing',
    ]);
    const stored = JSON.stringify(await store.readMessages('act-1', 'main'));
    expect(stored).not.toContain('Knowledge for');
    expect(stored).not.toContain('Turn context');
  });
});
