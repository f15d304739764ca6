import type { ModelMessage } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { describe, expect, it } from 'vitest';
import { mulberry32 as random } from '../../../test/chaos/killSwitch.js';
import { WorkingMemory } from '../src/index.js';

// A seeded generator (mulberry32, the crash campaign's), so a failing history can be rebuilt from its seed.
const text = (next: () => number) => {
  const sizes = [1, 3, 12, 60, 400];
  const n = sizes[Math.floor(next() * sizes.length)]!;
  return Array.from({ length: n }, (_, i) => `word${(i * 7 + n) % 50}`).join(' ');
};

/**
 * A history of `messages` messages of every size: user messages, replies, tool calls answered at once
 * or after other messages (a result far from its call), and tool call ids used twice.
 */
function history(seed: number, messages: number): ModelMessage[] {
  const next = random(seed);
  const out: ModelMessage[] = [];
  const open: string[] = [];
  let calls = 0;
  while (out.length < messages) {
    const pick = next();
    if (pick < 0.3) out.push({ role: 'user', content: text(next) });
    else if (pick < 0.55) out.push({ role: 'assistant', content: text(next) });
    else if (pick < 0.8) {
      const ids = Array.from({ length: 1 + Math.floor(next() * 2) }, () => {
        calls += 1;
        return `c${calls % 40}`;
      });
      out.push({
        role: 'assistant',
        content: '',
        toolCalls: ids.map((id) => ({ id, name: 'look_up', arguments: `{"q":"${text(next).slice(0, 40)}"}` })),
      });
      open.push(...ids);
    } else if (open.length > 0) {
      const id = open.splice(Math.floor(next() * open.length), 1)[0]!;
      out.push({ role: 'tool', content: text(next), toolCallId: id, toolName: 'look_up' });
    }
  }
  return out;
}

const system: ModelMessage = { role: 'system', content: 'You are the billing agent. Be brief.' };

describe('WorkingMemory.olderHistoryNeeded: what the newest part of a history settles', () => {
  it('answers 0 only when every input from any older history, with any messages appended, is the same', async () => {
    let settled = 0;
    for (let seed = 1; seed <= 40; seed += 1) {
      const memory = new WorkingMemory({ maxTokens: 200 + seed * 37 });
      const whole = history(seed, 160);
      const appended = history(seed + 1000, 6);
      for (let from = whole.length - 1; from >= 0; from -= 1) {
        const newest = whole.slice(from);
        const more = memory.olderHistoryNeeded(newest);
        expect(more).toBeGreaterThanOrEqual(0);
        if (more !== 0) continue;
        settled += 1;
        // Any older history (the real one, none, or another) gives the same inputs, before and after more messages.
        for (const older of [whole.slice(0, from), [], history(seed + 2000, 30)]) {
          for (const tail of [[], appended]) {
            const expected = await memory.prepareModelInput([system, ...older, ...newest, ...tail]);
            expect(await memory.prepareModelInput([system, ...newest, ...tail])).toEqual(expected);
          }
        }
        break;
      }
    }
    expect(settled).toBeGreaterThan(30);
  });

  it('needs more while the newest part is within budget, has no user message, or starts inside a tool call', () => {
    const memory = new WorkingMemory({ maxTokens: 100 });
    const big = Array.from({ length: 150 }, (_, i) => `w${i % 30}`).join(' ');
    expect(memory.olderHistoryNeeded([])).toBe(Math.ceil(101 / 32));
    expect(memory.olderHistoryNeeded([{ role: 'user', content: 'Refund order 1234' }])).toBeGreaterThan(1);
    expect(memory.olderHistoryNeeded([{ role: 'assistant', content: big }])).toBeGreaterThan(0);
    expect(memory.olderHistoryNeeded([{ role: 'user', content: big }])).toBe(0);
    // The result's call is older: its group may hold older messages, so its tokens do not count.
    const orphan: ModelMessage = { role: 'tool', content: big, toolCallId: 'c1', toolName: 'look_up' };
    expect(memory.olderHistoryNeeded([{ role: 'user', content: 'hi' }, orphan])).toBeGreaterThan(0);
    const call: ModelMessage = {
      role: 'assistant',
      content: '',
      toolCalls: [{ id: 'c1', name: 'look_up', arguments: '{}' }],
    };
    expect(memory.olderHistoryNeeded([{ role: 'user', content: 'hi' }, call, orphan])).toBe(0);
    // A stored system message first would be taken for instructions: read past it.
    expect(
      memory.olderHistoryNeeded([
        { role: 'system', content: 'x' },
        { role: 'user', content: big },
      ]),
    ).toBe(1);
  });

  it('answers undefined when the whole history counts: a pinned first message, a summary', () => {
    const newest: ModelMessage[] = [{ role: 'user', content: 'Refund order 1234' }];
    expect(new WorkingMemory({ maxTokens: 100, pinFirstUserMessage: true }).olderHistoryNeeded(newest)).toBe(undefined);
    const summarizer = new ScriptedModel(() => ({ text: 'summary' }));
    const summarizing = new WorkingMemory({ maxTokens: 100, strategy: 'summarize', summarizer });
    expect(summarizing.olderHistoryNeeded(newest)).toBe(undefined);
  });
});
