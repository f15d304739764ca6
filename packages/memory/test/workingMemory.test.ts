import { ConfigurationError, type ModelMessage } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { describe, expect, it } from 'vitest';
import { WorkingMemory } from '../src/index.js';

const system: ModelMessage = {
  role: 'system',
  content:
    'You are the billing agent of an online shop. Be brief, verify the account before refunds, never invent order data.',
};
const context: ModelMessage = {
  role: 'context',
  content:
    'Earlier conversations with this user: 1. Conversation chat-1 (2025-03-02, closed: resolved). Summary: charged twice for order 1234, refunded.',
};

/** A long history: `turns` turns, each a user message, an assistant message with 1–2 tool calls, their results, and a reply. */
function toolHeavyHistory(turns: number): ModelMessage[] {
  const history: ModelMessage[] = [];
  for (let t = 1; t <= turns; t++) {
    history.push({
      role: 'user',
      content: `Turn ${t}: please check order ${1000 + t} and tell me where my refund for it stands.`,
      id: `u${t}`,
    });
    const calls = Array.from({ length: 1 + (t % 2) }, (_, c) => ({
      id: `call_${t}_${c}`,
      name: c === 0 ? 'look_up_order' : 'look_up_refund',
      arguments: JSON.stringify({ orderId: String(1000 + t) }),
    }));
    history.push({ role: 'assistant', agent: 'billing', content: '', toolCalls: calls, id: `a${t}` });
    for (const call of calls) {
      const items = Array.from({ length: 3 + (t % 4) }, (_, i) => ({
        sku: `SKU-${t}-${i}`,
        name: `Item ${i} of order ${1000 + t}`,
        price: 9.5 + i,
        status: 'shipped',
      }));
      history.push({
        role: 'tool',
        toolCallId: call.id,
        toolName: call.name,
        content: JSON.stringify({ orderId: 1000 + t, items, refund: { state: 'pending', amount: 19.9 } }),
        id: `r${call.id}`,
      });
    }
    history.push({
      role: 'assistant',
      agent: 'billing',
      content: `Order ${1000 + t} has ${3 + (t % 4)} items; the refund of $19.90 is pending and should clear in 3-5 business days.`,
      id: `b${t}`,
    });
  }
  return history;
}

/** Asserts that every tool result's call is in `messages` before it and every call has its result. */
function expectNoDanglingToolCalls(messages: readonly ModelMessage[]): void {
  const calls = new Map<string, number>();
  messages.forEach((m, i) => {
    for (const c of m.toolCalls ?? []) calls.set(c.id, i);
  });
  const results = new Set<string>();
  messages.forEach((m, i) => {
    if (m.role !== 'tool') return;
    expect(calls.get(m.toolCallId!), `result ${m.toolCallId} without its call`).toBeLessThan(i);
    results.add(m.toolCallId!);
  });
  for (const id of calls.keys()) expect(results.has(id), `call ${id} without its result`).toBe(true);
}

describe('WorkingMemory', () => {
  it('fits a 50-turn tool-heavy history into 2,000 tokens without separating a tool call from its result', async () => {
    const memory = new WorkingMemory({ maxTokens: 2000, model: 'gpt-4.1-mini' });
    const history = toolHeavyHistory(50);
    const newest: ModelMessage = { role: 'user', content: 'And what about the refund for order 1050?', id: 'u-new' };
    const input = [system, context, ...history, newest];
    expect(memory.countTokens(input)).toBeGreaterThan(15_000);

    const built = await memory.prepareModelInput(input);

    expect(memory.countTokens(built)).toBeLessThanOrEqual(2000);
    expect(memory.countTokens(built)).toBeGreaterThan(1500); // the budget is used, not wasted
    expect(built.slice(0, 2)).toEqual([system, context]);
    expect(built.at(-1)).toBe(newest);
    expectNoDanglingToolCalls(built);
    // What is kept is the newest part of the history, in order, with nothing skipped in between.
    const kept = built.slice(2, -1);
    const from = history.indexOf(kept[0]!);
    expect(kept).toEqual(history.slice(from));
  });

  it('keeps the turn in progress when the history ends with tool results, and never splits it', async () => {
    const memory = new WorkingMemory({ maxTokens: 2000 });
    const history = toolHeavyHistory(50);
    const lastTurnStart = history.findLastIndex((m) => m.role === 'user');
    const midTurn = history.slice(0, -1); // ends with the tool results of turn 50
    const built = await memory.prepareModelInput([system, ...midTurn]);
    expect(memory.countTokens(built)).toBeLessThanOrEqual(2000);
    expectNoDanglingToolCalls(built);
    expect(built.slice(-midTurn.length + lastTurnStart)).toEqual(midTurn.slice(lastTurnStart));
  });

  it('pins the first user message when asked to', async () => {
    const memory = new WorkingMemory({ maxTokens: 2000, pinFirstUserMessage: true });
    const history = toolHeavyHistory(50);
    const built = await memory.prepareModelInput([
      system,
      ...history,
      { role: 'user', content: 'Thanks. Anything else pending?' },
    ]);
    expect(built[1]).toBe(history[0]);
    expect(memory.countTokens(built)).toBeLessThanOrEqual(2000);
    expectNoDanglingToolCalls(built);
  });

  it('returns the input unchanged when it fits', async () => {
    const memory = new WorkingMemory({ maxTokens: 2000 });
    const input = [system, context, ...toolHeavyHistory(2)];
    expect(await memory.prepareModelInput(input)).toEqual(input);
  });

  it('keeps system, context and the newest user message even when they alone exceed the budget', async () => {
    const memory = new WorkingMemory({ maxTokens: 50 });
    const newest: ModelMessage = { role: 'user', content: 'Where is my refund?' };
    const built = await memory.prepareModelInput([system, context, ...toolHeavyHistory(3), newest]);
    expect(built).toEqual([system, context, newest]);
  });

  it("keeps the turn's context where the agent loop puts it, just before the newest user message, when older history is dropped", async () => {
    const memory = new WorkingMemory({ maxTokens: 600 });
    const newest: ModelMessage = { role: 'user', content: 'Where is my refund?' };
    const history = toolHeavyHistory(20);
    const built = await memory.prepareModelInput([system, ...history, context, newest]);
    expect(built.length).toBeLessThan(history.length + 3);
    expect(built[0]).toEqual(system);
    expect(built.slice(-2)).toEqual([context, newest]);
    expectNoDanglingToolCalls(built);
    expect(memory.countTokens(built)).toBeLessThanOrEqual(600);
  });

  it("replaces dropped history with one cached summary under strategy 'summarize'", async () => {
    const summarizer = new ScriptedModel((_, i) => ({
      text: `Summary #${i + 1}: the user asked about refunds of many orders; all are pending.`,
    }));
    const memory = new WorkingMemory({ maxTokens: 2000, strategy: 'summarize', summarizer, summaryMaxTokens: 120 });
    const history = toolHeavyHistory(50);
    const ask = (text: string): ModelMessage => ({ role: 'user', content: text });

    const first = await memory.prepareModelInput([system, context, ...history, ask('Refund for 1050?')]);
    // ~15,000 dropped tokens go to the summariser in chunks of at most 6,000 tokens, each with the summary so far.
    const callsAfterFirst = memory.summaryCalls;
    expect(callsAfterFirst).toBe(3);
    expect(first[2]).toEqual({
      role: 'context',
      content:
        'Summary of the earlier part of this conversation:\nSummary #3: the user asked about refunds of many orders; all are pending.',
    });
    expect(first.filter((m) => m.role === 'context')).toHaveLength(2);
    expect(memory.countTokens(first)).toBeLessThanOrEqual(2000);
    expectNoDanglingToolCalls(first);

    // The same input again: served from the cache.
    await memory.prepareModelInput([system, context, ...history, ask('Refund for 1050?')]);
    expect(memory.summaryCalls).toBe(callsAfterFirst);

    // One more turn: only the newly dropped messages are sent, with the summary so far.
    const longer = [
      ...history,
      ...toolHeavyHistory(51)
        .slice(-5)
        .map((m) => ({ ...m, id: `${m.id}-51` })),
    ];
    const second = await memory.prepareModelInput([system, context, ...longer, ask('And 1051?')]);
    expect(memory.summaryCalls).toBe(callsAfterFirst + 1);
    const lastRequest = summarizer.requests.at(-1)!.messages[1]!.content;
    expect(lastRequest).toContain(`Summary so far:\nSummary #${callsAfterFirst}`);
    expect(lastRequest).not.toContain('Turn 1:');
    expect(memory.countTokens(second)).toBeLessThanOrEqual(2000);
  });

  it('falls back to dropping when the summariser fails, and reports the error', async () => {
    const errors: unknown[] = [];
    const memory = new WorkingMemory({
      maxTokens: 2000,
      strategy: 'summarize',
      summarizer: new ScriptedModel([{ error: new Error('model down') }]),
      onError: (e) => errors.push(e),
    });
    const built = await memory.prepareModelInput([
      system,
      ...toolHeavyHistory(50),
      { role: 'user', content: 'Refund?' },
    ]);
    expect(errors).toHaveLength(1);
    expect(built.filter((m) => m.role === 'context')).toEqual([]);
    expect(memory.countTokens(built)).toBeLessThanOrEqual(2000);
    expectNoDanglingToolCalls(built);
  });

  it('refuses bad options with ConfigurationError', () => {
    expect(() => new WorkingMemory({ maxTokens: 0 })).toThrow(/maxTokens must be a positive integer, got 0/);
    expect(() => new WorkingMemory({ maxTokens: 1000, strategy: 'summarize' })).toThrow(ConfigurationError);
  });
});
