/** The scale-out bench's history check finds each kind of damage a racing deployment could do. */
import type { Message } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { checkHistory, isClean } from './historyCheck.js';

const answerTo = (text: string) => `re: ${text}`;

/** The four messages of one handoff turn, from `seq`. */
function turn(text: string, seq: number, tag = text): Message[] {
  const at = '2026-01-01T00:00:00.000Z';
  return [
    { id: `u-${tag}`, seq, role: 'user', content: text, createdAt: at },
    {
      id: `a-${tag}`,
      seq: seq + 1,
      role: 'assistant',
      content: '',
      toolCalls: [{ id: `c-${tag}`, name: 'handoff_to_billing', arguments: '{}' }],
      createdAt: at,
    },
    {
      id: `t-${tag}`,
      seq: seq + 2,
      role: 'tool',
      content: 'Transferred to billing.',
      toolCallId: `c-${tag}`,
      createdAt: at,
    },
    { id: `r-${tag}`, seq: seq + 3, role: 'assistant', content: answerTo(text), createdAt: at },
  ];
}

const renumber = (messages: Message[]) => messages.map((m, i) => ({ ...m, seq: i + 1 }));

describe('checkHistory', () => {
  it('finds nothing wrong in whole turns stored in order', () => {
    expect(isClean(checkHistory([...turn('one', 1), ...turn('two', 5)], ['one', 'two'], answerTo))).toBe(true);
  });

  it('finds a lost turn', () => {
    expect(checkHistory(turn('one', 1), ['one', 'two'], answerTo)).toMatchObject({ lost: [1] });
  });

  it('finds a turn stored twice', () => {
    const faults = checkHistory(renumber([...turn('one', 1), ...turn('one', 5, 'one-again')]), ['one'], answerTo);
    expect(faults.duplicated).toBeGreaterThan(0);
    expect(faults.extra).toBe(4);
  });

  it('finds two turns whose messages are mixed, and turns out of order', () => {
    const [u1, a1, t1, r1] = turn('one', 1);
    const [u2, a2, t2, r2] = turn('two', 5);
    expect(
      checkHistory(renumber([u1!, u2!, a1!, t1!, r1!, a2!, t2!, r2!]), ['one', 'two'], answerTo).interleaved,
    ).toEqual([0, 1]);
    expect(
      checkHistory(renumber([...turn('two', 1), ...turn('one', 5)]), ['one', 'two'], answerTo).interleaved,
    ).toEqual([0, 1]);
  });

  it('finds a gap in the seqs', () => {
    expect(checkHistory([...turn('one', 1), ...turn('two', 6)], ['one', 'two'], answerTo).seqGaps).toBe(4);
  });

  it('accepts a failed turn that a later call finished with a retried step, and refuses one mixed with another turn', () => {
    const at = '2026-01-01T00:00:00.000Z';
    const [u1, a1, t1, r1] = turn('one', 1);
    const retried: Message[] = [
      u1!,
      a1!,
      { ...t1!, content: 'The turn was interrupted.' },
      {
        id: 'a-retry',
        seq: 0,
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'c-retry', name: 'handoff_to_billing', arguments: '{}' }],
        createdAt: at,
      },
      { id: 't-retry', seq: 0, role: 'tool', content: 'Transferred to billing.', toolCallId: 'c-retry', createdAt: at },
      r1!,
    ];
    const failed = new Set([0]);
    expect(isClean(checkHistory(renumber([...retried, ...turn('two', 7)]), ['one', 'two'], answerTo, failed))).toBe(
      true,
    );
    const mixed = renumber([u1!, a1!, t1!, { ...r1!, content: answerTo('two') }, ...turn('two', 5)]);
    expect(checkHistory(mixed, ['one', 'two'], answerTo, failed).interleaved).toEqual([0]);
  });
});
