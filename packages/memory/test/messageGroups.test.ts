import { describe, expect, it } from 'vitest';
import { groupMessages } from '../src/index.js';

const call = (id: string) => ({ id, name: 'look_up', arguments: '{}' });

describe('groupMessages', () => {
  it('puts an assistant message with tool calls and all its results in one group', () => {
    const groups = groupMessages([
      { role: 'user', content: 'Refund order 1234' },
      { role: 'assistant', content: '', toolCalls: [call('c1'), call('c2')] },
      { role: 'tool', content: 'a', toolCallId: 'c1' },
      { role: 'tool', content: 'b', toolCallId: 'c2' },
      { role: 'assistant', content: 'Done.' },
    ]);
    expect(groups.map((g) => [g.start, g.messages.length])).toEqual([
      [0, 1],
      [1, 3],
      [4, 1],
    ]);
  });

  it('spans everything between a call and a late result, so no cut can separate them', () => {
    const groups = groupMessages([
      { role: 'assistant', content: '', toolCalls: [call('c1')] },
      { role: 'user', content: 'still there?' },
      { role: 'tool', content: 'late', toolCallId: 'c1' },
      { role: 'user', content: 'ok' },
    ]);
    expect(groups.map((g) => g.messages.length)).toEqual([3, 1]);
  });

  it('leaves a result that answers no call in the history alone, and an empty history empty', () => {
    expect(
      groupMessages([
        { role: 'tool', content: 'x', toolCallId: 'gone' },
        { role: 'user', content: 'hi' },
      ]).map((g) => g.messages.length),
    ).toEqual([1, 1]);
    expect(groupMessages([])).toEqual([]);
  });
});
