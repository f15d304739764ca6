import type { ModelMessage } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { HistoryView, windowModelInput, windowStart } from '../src/index.js';

const m = (role: ModelMessage['role'], content: string): ModelMessage => ({ role, content });
const contents = (messages: readonly { content: string }[]) => messages.map((message) => message.content);

describe('windowStart and windowModelInput', () => {
  const conversation = [
    m('user', 'u1'),
    m('assistant', 'call'),
    m('tool', 'result'),
    m('assistant', 'a1'),
    m('user', 'u2'),
  ];

  it('keeps the newest messages, and drops tool results whose call the window cut off', () => {
    expect(windowStart(conversation, 2)).toBe(3);
    expect(windowStart(conversation, 3)).toBe(3); // would start with the tool result: its call is outside
    expect(windowStart(conversation, 4)).toBe(1);
    expect(windowStart(conversation, 5)).toBe(0);
    expect(windowStart(conversation, 50)).toBe(0);
  });

  it('leaves instructions and recalled context in place and counts neither', () => {
    const input = [
      m('system', 'instructions'),
      m('system', 'extra'),
      m('user', 'u1'),
      m('assistant', 'a1'),
      m('context', 'recalled'),
      m('user', 'u2'),
      m('assistant', 'a2'),
    ];
    expect(contents(windowModelInput(input, 2))).toEqual(['instructions', 'extra', 'recalled', 'u2', 'a2']);
    expect(contents(windowModelInput(input, 3))).toEqual(['instructions', 'extra', 'a1', 'recalled', 'u2', 'a2']);
    expect(windowModelInput(input, 4)).toBe(input);
    const toolFirst = [
      m('system', 'instructions'),
      m('assistant', 'call'),
      m('tool', 'r1'),
      m('tool', 'r2'),
      m('assistant', 'done'),
    ];
    expect(contents(windowModelInput(toolFirst, 3))).toEqual(['instructions', 'done']);
  });

  it('HistoryView gives agents the window, the same whether it holds the whole branch or its newest part', () => {
    const stored = ['user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'tool', 'tool', 'assistant'].map(
      (role, i) => ({
        id: `m${i + 1}`,
        seq: i + 1,
        role: role as 'user',
        content: `${role}-${i + 1}`,
        createdAt: '2026-01-01T00:00:00.000Z',
      }),
    );
    for (let window = 1; window <= 10; window += 1) {
      const whole = new HistoryView('keep', { window });
      whole.append(stored);
      for (let from = 1; from <= stored.length; from += 1) {
        const part = new HistoryView('keep', { window, complete: from === 1 });
        part.append(stored.slice(from - 1));
        if (part.visibleCount <= window && from > 1) part.prepend(stored.slice(0, from - 1), { complete: true });
        expect(contents(part.forAgent())).toEqual(contents(whole.forAgent()));
      }
      expect(whole.forAgent()[0]?.role).not.toBe('tool');
    }
  });
});
