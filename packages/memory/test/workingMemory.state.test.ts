import { type ModelMessage, ProviderStateTooLargeError, providerState, StateContainer } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { describe, expect, it } from 'vitest';
import { WorkingMemory } from '../src/index.js';

const system: ModelMessage = { role: 'system', content: 'You are the billing agent. Be brief.' };

/** `turns` turns of about 60 tokens each, with ids as stored messages have. */
function history(turns: number): ModelMessage[] {
  return Array.from({ length: turns }, (_, i) => [
    {
      role: 'user' as const,
      content: `Order ${i + 1}: ${'the parcel arrived damaged and I want a refund. '.repeat(4)}`,
      id: `u${i + 1}`,
    },
    { role: 'assistant' as const, content: `Refund for order ${i + 1} started.`, id: `a${i + 1}` },
  ]).flat();
}

const summarizing = () => {
  const summarizer = new ScriptedModel((_, i) => ({ text: `Summary ${i + 1}: refunds asked for damaged parcels.` }));
  return {
    summarizer,
    memory: new WorkingMemory({ maxTokens: 300, strategy: 'summarize', summarizer, summaryMaxTokens: 40 }),
  };
};

const summariesOf = (state: StateContainer) =>
  (state.branch['provider:working-memory'] as { summaries?: Record<string, string> } | undefined)?.summaries ?? {};

describe('WorkingMemory keeps its summaries in the state it is given', () => {
  it('keeps the newest 4 in its branch slice; another WorkingMemory reuses them, no model call', async () => {
    const state = new StateContainer({ session: {}, branch: {} });
    const { memory, summarizer } = summarizing();
    const context = { sessionId: 's', branchId: 'main', state: providerState(state, memory) };
    let input: ModelMessage[] = [];
    for (let turns = 6; turns <= 12; turns += 1)
      input = await memory.prepareModelInput([system, ...history(turns)], context);
    expect(summarizer.requests.length).toBeGreaterThan(4);
    const kept = summariesOf(state);
    expect(Object.keys(kept)).toHaveLength(4);
    expect(input[1]!.content).toContain(Object.values(kept).at(-1));
    expect(Object.keys(state.branch)).toEqual(['provider:working-memory']);

    const later = summarizing();
    const again = await later.memory.prepareModelInput([system, ...history(12)], {
      sessionId: 's',
      branchId: 'main',
      state: providerState(state, later.memory),
    });
    expect(later.summarizer.requests).toHaveLength(0);
    expect(again).toEqual(input);
  });

  it('uses a summary its slice has no room for, keeps it nowhere, and tells onError', async () => {
    const state = new StateContainer({ session: {}, branch: {} });
    const errors: unknown[] = [];
    const summarizer = new ScriptedModel(() => ({ text: 'Refunds asked for damaged parcels.' }));
    const memory = new WorkingMemory({
      maxTokens: 300,
      strategy: 'summarize',
      summarizer,
      summaryMaxTokens: 40,
      onError: (error) => errors.push(error),
    });
    const tight = providerState(state, { name: memory.name, maxStateBytes: 60 });
    const input = await memory.prepareModelInput([system, ...history(8)], {
      sessionId: 's',
      branchId: 'main',
      state: tight,
    });
    expect(input[1]).toEqual({
      role: 'context',
      content: 'Summary of the earlier part of this conversation:\nRefunds asked for damaged parcels.',
    });
    expect(errors).toEqual([expect.any(ProviderStateTooLargeError)]);
    expect(state.branch).toEqual({});
  });

  it('keeps only the newest summary when the slice has room for one', async () => {
    const state = new StateContainer({ session: {}, branch: {} });
    const { memory } = summarizing();
    const roomForOne = providerState(state, { name: memory.name, maxStateBytes: 200 });
    for (let turns = 6; turns <= 9; turns += 1)
      await memory.prepareModelInput([system, ...history(turns)], {
        sessionId: 's',
        branchId: 'main',
        state: roomForOne,
      });
    expect(Object.values(summariesOf(state))).toEqual(['Summary 4: refunds asked for damaged parcels.']);
  });
});
