/**
 * HistoryView's agent view ('omit' mode): handoff tool calls and their results are left out, other
 * calls and text kept, the stored (frozen) messages never changed. Checked against a plain
 * reference on random histories, appended in one batch or in several, and on worked examples.
 */
import type { Message, ToolCall } from '@baton/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HistoryView } from '../src/runtime/historyView.js';

const at = (seq: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, seq)).toISOString();

/** The reference: what an agent should see of one message, written the obvious way. */
function expectedView(message: Message): Message | undefined {
  const isHandoff = (name: string | undefined) => name?.startsWith('handoff_to_') === true;
  if (message.role === 'tool') return isHandoff(message.toolName) ? undefined : message;
  if (message.role !== 'assistant' || message.toolCalls === undefined) return message;
  const kept = message.toolCalls.filter((call) => !isHandoff(call.name));
  if (kept.length === message.toolCalls.length) return message;
  const { toolCalls: _dropped, ...rest } = message;
  if (kept.length > 0) return { ...rest, toolCalls: kept };
  return message.content === '' ? undefined : rest;
}

type Shape =
  | { kind: 'user' | 'reply'; text: string }
  | { kind: 'calls'; text: string; names: string[] }
  | { kind: 'result'; name: string };

const nameArbitrary = fc.constantFrom(
  'handoff_to_billing',
  'handoff_to_orders',
  'refund',
  'lookup',
  'handoff',
  'handoff_tox',
);

const shapeArbitrary: fc.Arbitrary<Shape> = fc.oneof(
  fc.record({ kind: fc.constantFrom('user' as const, 'reply' as const), text: fc.string({ maxLength: 8 }) }),
  fc.record({
    kind: fc.constant('calls' as const),
    text: fc.constantFrom('', 'let me check'),
    names: fc.array(nameArbitrary, { minLength: 1, maxLength: 3 }),
  }),
  fc.record({ kind: fc.constant('result' as const), name: nameArbitrary }),
);

function toMessage(shape: Shape, index: number): Message {
  const seq = index + 1;
  const base = { id: `m-${seq}`, seq, createdAt: at(seq) };
  if (shape.kind === 'user') return Object.freeze({ ...base, role: 'user', content: shape.text });
  if (shape.kind === 'reply')
    return Object.freeze({ ...base, role: 'assistant', agent: 'triage', content: shape.text });
  if (shape.kind === 'result')
    return Object.freeze({
      ...base,
      role: 'tool',
      agent: 'triage',
      content: 'done',
      toolCallId: `c-${seq}`,
      toolName: shape.name,
      metadata: { n: seq },
    });
  if (shape.kind !== 'calls') throw new Error('unreachable');
  const toolCalls: ToolCall[] = shape.names.map((name, i) =>
    Object.freeze({ id: `c-${seq}-${i}`, name, arguments: JSON.stringify({ i }) }),
  );
  return Object.freeze({
    ...base,
    role: 'assistant',
    agent: 'triage',
    content: shape.text,
    toolCalls: Object.freeze(toolCalls) as ToolCall[],
  });
}

describe('HistoryView agent view', () => {
  it('leaves out exactly the handoff calls and results, in one batch or several, and changes no stored message', () => {
    fc.assert(
      fc.property(
        fc.array(shapeArbitrary, { maxLength: 40 }),
        fc.array(fc.nat({ max: 40 }), { maxLength: 4 }),
        (shapes, cuts) => {
          const messages = shapes.map(toMessage);
          const before = JSON.stringify(messages);
          const view = new HistoryView('omit');
          let from = 0;
          for (const cut of [...cuts].sort((a, b) => a - b)) {
            view.append(messages.slice(from, Math.max(from, cut)));
            from = Math.max(from, cut);
          }
          view.append(messages.slice(from));
          const expected = messages.map(expectedView).filter((m) => m !== undefined);
          const last = messages.at(-1);
          // A step paused on unanswered calls: the last message is given whole, so every call is answered.
          const paused = last?.role === 'assistant' && (last.toolCalls?.length ?? 0) > 0;
          expect(view.forAgent()).toEqual(
            paused
              ? [
                  ...messages
                    .slice(0, -1)
                    .map(expectedView)
                    .filter((m) => m !== undefined),
                  last,
                ]
              : expected,
          );
          expect(view.messages).toEqual(messages);
          expect(JSON.stringify(messages)).toBe(before);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps text and other calls of a message that also hands off, and drops an empty hand-off', () => {
    const messages = [
      toMessage({ kind: 'user', text: 'refund please' }, 0),
      toMessage({ kind: 'calls', text: '', names: ['handoff_to_billing'] }, 1),
      toMessage({ kind: 'result', name: 'handoff_to_billing' }, 2),
      toMessage({ kind: 'calls', text: 'checking', names: ['handoff_to_orders', 'refund'] }, 3),
      toMessage({ kind: 'result', name: 'refund' }, 4),
      toMessage({ kind: 'calls', text: 'over to orders', names: ['handoff_to_orders'] }, 5),
      toMessage({ kind: 'reply', text: 'done' }, 6),
    ];
    const view = new HistoryView('omit');
    view.append(messages);
    const seen = view.forAgent();
    expect(seen.map((m) => m.seq)).toEqual([1, 4, 5, 6, 7]);
    expect(seen[1]).toEqual({
      id: 'm-4',
      seq: 4,
      createdAt: at(4),
      role: 'assistant',
      agent: 'triage',
      content: 'checking',
      toolCalls: [{ id: 'c-4-1', name: 'refund', arguments: '{"i":1}' }],
    });
    expect(seen[2]).toBe(messages[4]);
    expect(seen[3]).toEqual({
      id: 'm-6',
      seq: 6,
      createdAt: at(6),
      role: 'assistant',
      agent: 'triage',
      content: 'over to orders',
    });
    expect(messages[3]!.toolCalls).toHaveLength(2);
    const keep = new HistoryView('keep');
    keep.append(messages);
    expect(keep.forAgent()).toEqual(messages);
  });
});
